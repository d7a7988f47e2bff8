package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/guest"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/ownedtemp"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

const (
	namespace = "default"
	machine   = "demo-pool1-x7k2p-9fzq4"
	// installScript stands in for Rancher's system-agent installer.
	installScript = "#!/bin/sh\necho 'Rancher system agent would be installed here'\n"
)

func run(ctx context.Context, plugin string, realGuest bool, out io.Writer) error {
	pluginDir, err := rmachine.PluginDir(plugin)
	if err != nil {
		return err
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, "\n== "+format+"\n", args...) }

	say("Building or finding the real rancher-machine CLI (hack/tools.sh; minutes on a fresh machine)")
	rancherMachine, err := rmachine.Find(ctx)
	if err != nil {
		return err
	}
	say("Starting a simulated Harvester: etcd, kube-apiserver and kube-controller-manager on 127.0.0.1, Harvester's and KubeVirt's CRDs, webhooks and KubeVirt's VirtualMachine controller, stand-ins for the other controllers (a first run builds the servers: tens of minutes on 2 cores)")
	t0 := time.Now()
	bed, err := testbed.Start(ctx, testbed.Options{Logf: func(format string, args ...any) {
		fmt.Fprintf(out, "   "+format+"\n", args...)
	}})
	if err != nil {
		return err
	}
	defer func() {
		bed.Stop()
		say("Stopped the simulated Harvester; nothing is left running")
	}()
	fmt.Fprintf(out, "   ready in %s; admin kubeconfig %s\n", time.Since(t0).Round(100*time.Millisecond), bed.KubeconfigPath)
	timeout := "120"
	if realGuest {
		say("Real guest: building or finding the Debian guest image (hack/guest-image.sh; about two minutes once)")
		if _, err := guest.FindImage(ctx); err != nil {
			return err
		}
		if err := realGuests(ctx, bed); err != nil {
			return err
		}
		timeout = fmt.Sprint(int(guest.BootBudget() / time.Second))
		fmt.Fprintf(out, "   VMs in namespace %s boot under qemu (%s); create waits for the real qemu-guest-agent\n", namespace, guest.Accel())
	}

	work, err := ownedtemp.Dir("dmdh-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	script := filepath.Join(work, "install.sh")
	if err := os.WriteFile(script, []byte(installScript), 0o644); err != nil {
		return err
	}
	cli := &demoCLI{out: out, CLI: rmachine.CLI{
		Bin:       rancherMachine,
		Store:     filepath.Join(work, "store"),
		PluginDir: pluginDir,
		Env:       []string{"HARVESTER_KUBECONFIG_CONTENT=" + base64.StdEncoding.EncodeToString(bed.AdminKubeconfig())},
	}}

	say("Creating a machine the way Rancher does (credential in HARVESTER_KUBECONFIG_CONTENT, its install script through --custom-install-script)")
	userData := base64.StdEncoding.EncodeToString([]byte("#cloud-config\ntimezone: UTC\n"))
	if err := cli.run(ctx, "create", "-d", "harvester", "--custom-install-script", script,
		"--harvester-vm-namespace", namespace, "--harvester-cluster-name", "demo",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "20",
		"--harvester-network-name", "default/vm-untag", "--harvester-cpu-count", "2", "--harvester-memory-size", "4",
		"--harvester-create-timeout", timeout, "--harvester-user-data", userData, machine); err != nil {
		return err
	}
	say("rancher-machine status / ip")
	if err := cli.run(ctx, "status", machine); err != nil {
		return err
	}
	if err := cli.run(ctx, "ip", machine); err != nil {
		return err
	}
	say("What Harvester now holds")
	if err := summary(ctx, bed, out); err != nil {
		return err
	}
	if realGuest {
		say("Inside the guest, over SSH with the key the driver generated")
		if err := inside(ctx, bed, filepath.Join(cli.Store, "machines", machine, "id_rsa"), out); err != nil {
			return err
		}
	}
	say("Removing the machine (rancher-machine rm -y, as Rancher does)")
	return cli.run(ctx, "rm", "-y", machine)
}

// demoCLI runs rancher-machine, showing the command and streaming its output indented.
type demoCLI struct {
	rmachine.CLI
	out io.Writer
}

func (m *demoCLI) run(ctx context.Context, args ...string) error {
	fmt.Fprintf(m.out, "$ rancher-machine %s\n", strings.Join(args, " "))
	r := m.Run(ctx, func(line string, _ time.Time) bool {
		fmt.Fprintf(m.out, "   %s\n", line)
		return false
	}, args...)
	if r.Err != nil {
		return fmt.Errorf("rancher-machine %s: %w", args[0], r.Err)
	}
	return nil
}

// summary prints the machine's objects: VM, VMI, PVCs and the cloud-init Secret.
func summary(ctx context.Context, bed *testbed.Bed, out io.Writer) error {
	vm, err := bed.Virt.KubevirtV1().VirtualMachines(namespace).Get(ctx, machine, metav1.GetOptions{})
	if err != nil {
		return err
	}
	limits := vm.Spec.Template.Spec.Domain.Resources.Limits
	requests := vm.Spec.Template.Spec.Domain.Resources.Requests
	fmt.Fprintf(out, "   VirtualMachine %s/%s: %s, runStrategy %s, %s CPUs, %s memory (requests %s CPU, %s memory: Harvester's mutator, overcommit-config)\n",
		namespace, machine, vm.Status.PrintableStatus, *vm.Spec.RunStrategy, limits.Cpu(), limits.Memory(), requests.Cpu(), requests.Memory())
	for _, k := range []string{"harvesterhci.io/creator", "guestcluster.harvesterhci.io/name", "nodepool.harvesterhci.io/name", "harvesterhci.io/machineSetName"} {
		fmt.Fprintf(out, "     label %s=%s\n", k, vm.Labels[k])
	}
	vmi, err := bed.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, machine, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, iface := range vmi.Status.Interfaces {
		fmt.Fprintf(out, "   VMI: %s, %s %s (%s)\n", vmi.Status.Phase, iface.Name, strings.Join(iface.IPs, " "), iface.InfoSource)
	}
	pvcs, err := bed.Kube.CoreV1().PersistentVolumeClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range pvcs.Items {
		if strings.HasPrefix(p.Name, machine) {
			size := p.Spec.Resources.Requests.Storage()
			fmt.Fprintf(out, "   PVC %s: %s, %s, storage class %s, image %s\n", p.Name, p.Status.Phase, size, *p.Spec.StorageClassName, p.Annotations["harvesterhci.io/imageId"])
		}
	}
	secret, err := bed.Kube.CoreV1().Secrets(namespace).Get(ctx, machine+"-cloudinit", metav1.GetOptions{})
	if err != nil {
		return err
	}
	userData := secret.Data["userdata"]
	fmt.Fprintf(out, "   Secret %s (owned by the VM), user data the node boots with (%d bytes):\n", secret.Name, len(userData))
	for _, line := range strings.Split(strings.TrimRight(string(userData), "\n"), "\n") {
		if len(line) > 110 {
			line = line[:107] + "..."
		}
		fmt.Fprintf(out, "     | %s\n", line)
	}
	return nil
}
