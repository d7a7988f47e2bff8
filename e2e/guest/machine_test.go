package guest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A guest boots the image from a NoCloud seed; its cloud-init enables the agent (the image starts none: the
// scenarios prove that side through the driver), which then reports the guest's interface, by MAC, with the
// address user-mode networking hands out. A graceful stop powers the guest off through ACPI.
func TestBootReportsAddressThroughTheAgent(t *testing.T) {
	img := Require(t)
	dir := t.TempDir()
	mac := "52:54:00:12:34:56"
	userData := "#cloud-config\nruncmd:\n  - [systemctl, enable, --now, qemu-guest-agent.service]\n"
	start := time.Now()
	m, err := Boot(context.Background(), Spec{Image: img, Disk: filepath.Join(dir, "disk.qcow2"), Dir: dir, MACs: []string{mac},
		Seed: Seed{UserData: []byte(userData), InstanceID: "g1", Hostname: "g1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), BootBudget())
	defer cancel()
	if err := m.WaitCloudInit(ctx); err != nil {
		t.Fatalf("%v\n%s", err, m.ConsoleTail(6000))
	}
	t.Logf("cloud-init finished after %v (%s)", time.Since(start).Round(time.Second), m.Accel)
	var ifaces []Interface
	for range 5 { // the agent may take a moment to answer after cloud-init started it
		actx, cancel := context.WithTimeout(context.Background(), time.Second)
		ifaces, err = m.Interfaces(actx)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil || !hasIPv4(ifaces, mac, "10.0.2.15") {
		t.Fatalf("the agent does not report 10.0.2.15 on %s: %v %+v\n%s", mac, err, ifaces, m.ConsoleTail(6000))
	}
	info, err := m.AgentInfo(context.Background())
	if err != nil || info.Version == "" {
		t.Errorf("guest-info: %+v %v", info, err)
	}
	if osInfo, err := m.OSInfo(context.Background()); err != nil || osInfo.ID != "debian" || !strings.HasSuffix(osInfo.KernelRelease, "-cloud-amd64") {
		t.Errorf("guest-get-osinfo: %+v %v", osInfo, err)
	}
	stopped := time.Now()
	m.Stop(2 * time.Minute)
	if m.Err() != nil {
		t.Errorf("the guest did not power off through ACPI: %v\n%s", m.Err(), m.ConsoleTail(3000))
	}
	t.Logf("powered off in %v", time.Since(stopped).Round(time.Second))
}

func hasIPv4(ifaces []Interface, mac, ip string) bool {
	for _, i := range ifaces {
		if strings.EqualFold(i.MAC, mac) {
			for _, a := range i.IPAddresses {
				if a.Type == "ipv4" && a.Address == ip {
					return true
				}
			}
		}
	}
	return false
}
