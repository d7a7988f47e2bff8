package scenarios

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/guest"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/rmachine"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// guestInstallScript stands in for Rancher's installer in a real guest. It records that it ran, whether the user's
// runcmd ran before it, and whether the agent was already up: Rancher's script must run last.
const guestInstallScript = `#!/bin/sh
{
  echo registered
  test -e /var/lib/e2e-user-runcmd && echo after-user-runcmd
  systemctl is-active qemu-guest-agent || true
} > /var/lib/e2e-install-marker
`

// guestUserData is what a user puts in --harvester-user-data: a timezone, a user, a command.
const guestUserData = `#cloud-config
timezone: Europe/Paris
users:
  - default
  - name: alice
    shell: /bin/bash
runcmd:
  - touch /var/lib/e2e-user-runcmd
`

// TestRealGuests runs the real-guest scenarios (being parallel) after the package's other tests, which would
// otherwise share the cores with guests that, without KVM, boot for minutes; and one after the other: two guests
// booting at once under TCG each took more than twice as long. On 2 cores the machine is busy throughout make
// test, so what counts is the CPU the guests take: two boots in all, and no guest left idle while a test waits.
func TestRealGuests(t *testing.T) {
	guest.Require(t)
	t.Parallel()
	t.Run("WithoutAgentTimesOut", testRealGuestWithoutAgentTimesOut)
	t.Run("RancherFlow", testRealGuestRancherFlow)
}

// The Rancher flow on a real guest: Create returns once the real qemu-guest-agent reported the address, and the
// guest booted from the driver's cloud-init is what Rancher needs: named after the machine, the user's user data
// applied, the agent enabled by cloud-init, Rancher's script run last, the cloud provider kubeconfig in place.
// Then stop (an ACPI power-off), start (the agent comes back on the same disk) and rm leave nothing behind.
func testRealGuestRancherFlow(t *testing.T) {
	b, ns, cli := realGuestNamespace(t)
	name := "rg1-pool1-abcde-fghij"
	ctx := context.Background()

	start := time.Now()
	args := guestCreateArgs(t, ns, "--harvester-user-data", base64.StdEncoding.EncodeToString([]byte(guestUserData)),
		"--harvester-cluster-name", "rg1", "--harvester-generate-cloud-provider-config",
		"--harvester-cloud-provider-server", "https://192.0.2.100:6443")
	r := cli.runWithin(guest.BootBudget()+2*time.Minute, append(args, name)...)
	if r.Err != nil {
		t.Fatalf("create: %s\n%s", r, guestConsole(b, ns, name))
	}
	t.Logf("create returned after %v (%s)", time.Since(start).Round(time.Second), guest.Accel())
	vmi := guestVMI(t, b, ns, name)
	if c := vmiCondition(vmi, kubevirtv1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("create returned before the real agent connected: %+v", vmi.Status.Conditions)
	}
	if v := vmi.Annotations[standin.AnnotationGuestAgent]; v == "" {
		t.Errorf("the agent's guest-info version was not recorded")
	} else {
		t.Logf("qemu-guest-agent %s", v)
	}
	// The agent also tells which system runs, published (like virt-handler does) once it answered; the kernel is
	// checked inside below.
	osInfo := guestOSInfo(t, b, ns, name)
	if osInfo.ID != "debian" || osInfo.VersionID != "12" || osInfo.KernelRelease == "" {
		t.Errorf("status.guestOSInfo from the agent: %+v", osInfo)
	}
	if !strings.Contains(r.Output, "is running at 10.0.2.15") {
		t.Errorf("create did not report the address the guest agent reported:\n%s", r.Output)
	}
	if out := cli.must("ip", name).Answer(); out != "10.0.2.15" {
		t.Errorf("ip: %q", out)
	}

	sh := guestShell(t, cli, vmi)
	// cloud-init's last stage (scripts, then the final message) may still run when the agent reports the IP.
	if out, err := sh.Run("cloud-init status --wait --long"); err != nil {
		t.Errorf("cloud-init did not finish cleanly: %v\n%s", err, out)
	}
	for _, check := range []struct{ what, command, want string }{
		{"the hostname is the machine name", "hostname", name},
		{"the agent reported the running kernel", "uname -r", osInfo.KernelRelease},
		{"Rancher's script ran, after the user's runcmd, with the agent already up", "cat /var/lib/e2e-install-marker",
			"registered\nafter-user-runcmd\nactive"},
		{"the user's timezone applied", "readlink /etc/localtime", "/usr/share/zoneinfo/Europe/Paris"},
		{"the user's user exists", "id -un alice", "alice"},
		{"qemu-guest-agent runs", "systemctl is-active qemu-guest-agent", "active"},
		// The image ships the agent disabled and nothing else enables it: cloud-init's runcmd did.
		{"qemu-guest-agent was enabled", "systemctl is-enabled qemu-guest-agent", "enabled"},
		{"cloud-init's runcmd enabled it", "grep -c 'enable.*qemu-guest-agent' /var/lib/cloud/instance/scripts/runcmd", "1"},
		{"the CCM kubeconfig is root's, mode 0600", "stat -c '%a %U' /var/lib/rancher/rke2/etc/config-files/cloud-provider-config", "600 root"},
		{"the CSI kubeconfig is root's, mode 0600", "stat -c '%a %U' /etc/kubernetes/cloud-config", "600 root"},
	} {
		out, err := sh.Run(check.command)
		if got := strings.TrimSpace(out); err != nil || got != check.want {
			t.Errorf("%s: `%s` gave %q (%v), want %q", check.what, check.command, got, err, check.want)
		}
	}
	token, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, config.CloudProviderAccountName("rg1")+"-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/var/lib/rancher/rke2/etc/config-files/cloud-provider-config", "/etc/kubernetes/cloud-config"} {
		out, err := sh.Run("cat " + path)
		if err != nil || !strings.Contains(out, "server: https://192.0.2.100:6443") || !strings.Contains(out, string(token.Data["token"])) ||
			!strings.Contains(out, "namespace: "+ns) {
			t.Errorf("%s does not hold the guest cluster's scoped kubeconfig (%v):\n%s", path, err, out)
		}
	}
	// The driver's own credential never reaches the guest: its client key is nowhere on the disk.
	if secret := credentialSecret(t, b); secret != "" {
		if out, _ := sh.Run("grep -rlF '" + secret + "' /etc /var/lib /root /home /usr/local 2>/dev/null"); strings.TrimSpace(out) != "" {
			t.Errorf("the driver's credential is in the guest: %s", out)
		}
	}
	bootID, err := sh.Run("cat /proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	sh.Close()

	// restart is the driver's halt (KubeVirt's stop: the guest powered off through ACPI, the VMI gone once it is
	// down) then its start: a new VMI, a new boot of the same disk. cloud-init does not run its per-instance
	// modules twice, and the agent, enabled the first time, is back on its own. (stop and start alone are the two
	// halves; the stand-in scenarios run them.)
	firstBoot := strings.TrimSpace(bootID)
	running := "VM " + ns + "/" + name + " is running at"
	if r := cli.runUntilWithin(guest.BootBudget()+3*time.Minute, running, "restart", name); !strings.Contains(r.Output, running) {
		t.Fatalf("restart: %s\n%s", r, guestConsole(b, ns, name))
	}
	rebooted := guestVMI(t, b, ns, name)
	if rebooted.UID == vmi.UID {
		t.Errorf("restart left the same VMI (%s)", vmi.UID)
	}
	if rebooted.Annotations[standin.AnnotationGuestDisk] != vmi.Annotations[standin.AnnotationGuestDisk] {
		t.Errorf("restart booted another disk: %s, first %s", rebooted.Annotations[standin.AnnotationGuestDisk], vmi.Annotations[standin.AnnotationGuestDisk])
	}
	sh = guestShell(t, cli, rebooted)
	out, err := sh.Run("systemctl is-active qemu-guest-agent; head -1 /var/lib/e2e-install-marker; cat /proc/sys/kernel/random/boot_id")
	sh.Close()
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 3 || lines[0] != "active" || lines[1] != "registered" {
		t.Fatalf("after restart: %q %v", out, err)
	} else if lines[2] == firstBoot {
		t.Errorf("restart did not reboot the guest (same boot id %s)", firstBoot)
	}

	// kill powers the guest off at once: the VMI's grace period is 0 by the time it goes (what KubeVirt's
	// stop --grace-period 0 does), so the stand-in ends qemu without an ACPI shutdown.
	zeroGrace := watchForZeroGrace(t, b, rebooted)
	cli.must("kill", name)
	if err := <-zeroGrace; err != nil {
		t.Errorf("kill did not ask for an immediate power-off: %v", err)
	}
	noGuestProcess(t, name)
	if out := cli.must("status", name).Answer(); out != "Stopped" {
		t.Errorf("status after kill: %q", out)
	}

	cli.must("rm", "-y", name)
	nothingLeft(t, b, ns)
	noGuestProcess(t, name)
	guestFilesGone(t, vmi, rebooted)
}

// With guest-agent injection off, no address is ever reported: the real guest starts booting, and Create fails
// with the timeout naming the missing agent; the rollback ends the guest, and nothing is left. The timeout is
// short: the guest need not finish booting for that. That the image's agent does not start unless the driver's
// cloud-init enables it is shown by RancherFlow (the image ships it disabled; cloud-init's runcmd enabled it) and
// by cloudinit's render tests (without InstallGuestAgent, no agent in the cloud-config).
func testRealGuestWithoutAgentTimesOut(t *testing.T) {
	b, ns, cli := realGuestNamespace(t)
	name := "rg2-pool1-abcde-fghij"
	const timeout = 90 * time.Second
	args := guestCreateArgs(t, ns, "--harvester-skip-guest-agent")
	args = withFlag(args, "--harvester-create-timeout", timeoutSeconds(timeout))
	result := make(chan rmachine.Result, 1)
	go func() { result <- cli.runWithin(timeout+guest.BootBudget(), append(args, name)...) }()

	// While Create waits, the real guest runs (qemu started, its SSH port forwarded).
	vmi := guestVMI(t, b, ns, name)

	r := <-result
	if r.Err == nil {
		t.Fatalf("create succeeded without a guest agent: %s", r)
	}
	t.Cleanup(func() {
		if t.Failed() { // what the create and its rollback said, for what was left
			t.Logf("the create's output:\n%s", r.Output)
		}
	})
	for _, want := range []string{"timed out after", "guest agent not connected", "qemu-guest-agent"} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("the error does not say %q:\n%s", want, r.Output)
		}
	}
	nothingLeft(t, b, ns)
	noGuestProcess(t, name)
	guestFilesGone(t, vmi)
}

// realGuestNamespace gives a test a namespace of the shared bed whose VMs boot as real guests, and a CLI.
func realGuestNamespace(t *testing.T) (*testbed.Bed, string, *machineCLI) {
	t.Helper()
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	annotateNamespace(t, b, ns, standin.AnnotationGuest, standin.GuestReal)
	return b, ns, newCLI(t, b.AdminKubeconfig())
}

// guestCreateArgs are createArgs with the real-guest install script and a create timeout for a real first boot.
func guestCreateArgs(t *testing.T, ns string, extra ...string) []string {
	t.Helper()
	args := createArgs(t, ns, extra...)
	script := filepath.Join(t.TempDir(), "install.sh")
	if err := os.WriteFile(script, []byte(guestInstallScript), 0o644); err != nil {
		t.Fatal(err)
	}
	args = withFlag(args, "--custom-install-script", script)
	return withFlag(args, "--harvester-create-timeout", timeoutSeconds(guest.BootBudget()))
}

// withFlag sets the value of a flag already in args.
func withFlag(args []string, flag, value string) []string {
	out := append([]string{}, args...)
	for i := range out[:len(out)-1] {
		if out[i] == flag {
			out[i+1] = value
			return out
		}
	}
	panic("withFlag: " + flag + " is not in the arguments")
}

func timeoutSeconds(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

// guestVMI waits for the VMI of a real guest to be running with its SSH port published.
func guestVMI(t *testing.T, b *testbed.Bed, ns, name string) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vmi, err := b.WaitVMI(ctx, ns, name, "a running real guest", func(vmi *kubevirtv1.VirtualMachineInstance, exists bool) bool {
		return exists && vmi.Status.Phase == kubevirtv1.Running && vmi.DeletionTimestamp == nil && vmi.Annotations[standin.AnnotationGuestSSH] != ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return vmi
}

// guestOSInfo waits for the VMI's status.guestOSInfo, filled from the agent's guest-get-osinfo.
func guestOSInfo(t *testing.T, b *testbed.Bed, ns, name string) kubevirtv1.VirtualMachineInstanceGuestOSInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	vmi, err := b.WaitVMI(ctx, ns, name, "guestOSInfo from the agent", func(vmi *kubevirtv1.VirtualMachineInstance, exists bool) bool {
		return exists && vmi.Status.GuestOSInfo.ID != ""
	})
	if err != nil {
		t.Error(err)
		return kubevirtv1.VirtualMachineInstanceGuestOSInfo{}
	}
	return vmi.Status.GuestOSInfo
}

// guestShell logs in to the guest as root (the driver's default SSH user) with the key the driver generated.
func guestShell(t *testing.T, cli *machineCLI, vmi *kubevirtv1.VirtualMachineInstance) *guest.Shell {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(cli.Store, "machines", vmi.Name, "id_rsa"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guest.BootBudget())
	defer cancel()
	sh, err := guest.DialSSH(ctx, vmi.Annotations[standin.AnnotationGuestSSH], "root", key)
	if err != nil {
		t.Fatalf("%v\n%s", err, guest.ConsoleTail(vmi.Annotations[standin.AnnotationGuestConsole], 4000))
	}
	return sh
}

// guestConsole is the tail of the guest's console, for a failure message.
func guestConsole(b *testbed.Bed, ns, name string) string {
	vmi, err := b.Virt.KubevirtV1().VirtualMachineInstances(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || vmi.Annotations[standin.AnnotationGuestConsole] == "" {
		return "(no guest console)"
	}
	return "guest console:\n" + guest.ConsoleTail(vmi.Annotations[standin.AnnotationGuestConsole], 4000)
}

func vmiCondition(vmi *kubevirtv1.VirtualMachineInstance, typ kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == typ {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}

// credentialSecret is a piece of the admin kubeconfig's client key, which must never appear in a guest.
func credentialSecret(t *testing.T, b *testbed.Bed) string {
	for _, line := range strings.Split(string(b.AdminKubeconfig()), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (k == "client-key-data" || k == "token") {
			if v = strings.TrimSpace(v); len(v) >= 32 {
				from := (len(v) - 32) / 2
				return v[from : from+32]
			}
		}
	}
	t.Error("the admin kubeconfig has neither client-key-data nor token")
	return ""
}

// noGuestProcess asserts that no qemu process of this test process (the stand-in runs in it and starts qemu)
// runs for the machine any more. Another test run on the same machine boots guests of the same names: its qemu
// processes are not this run's.
func noGuestProcess(t *testing.T, name string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "qemu-system") && strings.Contains(string(b), "\x00-name\x00"+name+"\x00") &&
			parentPID(filepath.Dir(p)) == os.Getpid() {
			t.Errorf("a qemu process still runs for %s (%s)", name, p)
		}
	}
}

// parentPID is the parent of the process whose /proc directory is dir, or -1 when it cannot be read.
func parentPID(dir string) int {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
}

// guestFilesGone asserts that the files the stand-in kept for these boots of a real guest — each boot's directory
// (seed, sockets, console log) and the VM's disk — are removed soon after the machine is.
func guestFilesGone(t *testing.T, boots ...*kubevirtv1.VirtualMachineInstance) {
	t.Helper()
	var files []string
	for _, vmi := range boots {
		console, disk := vmi.Annotations[standin.AnnotationGuestConsole], vmi.Annotations[standin.AnnotationGuestDisk]
		if console == "" || disk == "" {
			t.Errorf("VMI %s/%s does not name its guest's files: %v", vmi.Namespace, vmi.Name, vmi.Annotations)
			return
		}
		files = append(files, filepath.Dir(console), disk)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var left []string
		for _, f := range files {
			if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
				left = append(left, f)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("files of the real guest left behind a minute after rm: %s", strings.Join(left, ", "))
			return
		}
		time.Sleep(time.Second)
	}
}
