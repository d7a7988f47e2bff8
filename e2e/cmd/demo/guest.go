package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/guest"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// realGuests makes the stand-in boot the VMs of the demo's namespace as real guests.
func realGuests(ctx context.Context, bed *testbed.Bed) error {
	ns, err := bed.Kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[standin.AnnotationGuest] = standin.GuestReal
	_, err = bed.Kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	return err
}

// inside shows what the guest booted into: its name, cloud-init's verdict, the agent, Rancher's script.
func inside(ctx context.Context, bed *testbed.Bed, keyFile string, out io.Writer) error {
	vmi, err := bed.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, machine, metav1.GetOptions{})
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	sh, err := guest.DialSSH(ctx, vmi.Annotations[standin.AnnotationGuestSSH], "root", key)
	if err != nil {
		return err
	}
	defer sh.Close()
	for _, cmd := range []string{"hostname", "cloud-init status --wait", "systemctl is-active qemu-guest-agent",
		"ls /usr/local/custom_script", "cat /etc/timezone"} {
		fmt.Fprintf(out, "$ ssh root@%s %s\n", vmi.Annotations[standin.AnnotationGuestSSH], cmd)
		res, err := sh.Run(cmd)
		for _, line := range strings.Split(res, "\n") {
			if line = strings.Trim(line, ". "); line != "" { // cloud-init status --wait prints a dot per second
				fmt.Fprintf(out, "   %s\n", line)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
