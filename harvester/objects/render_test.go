package objects

import (
	"encoding/base64"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

// rancherFile is what rancher-machine writes behind --harvester-cloud-config for Rancher's install script.
const rancherFile = `#cloud-config
hostname: gc1-pool1-abcde-fghij
runcmd:
- sh /usr/local/custom_script/install.sh
write_files:
- content: H4sIAAAAAAAA/1LWz8ksLinKzEvXTc7PS8tMTC0qVshILEoBCAAA//9gdg2oEwAAAA==
  encoding: gzip+b64
  path: /usr/local/custom_script/install.sh
  permissions: "0644"
`

// renderArgs renders what a create of machine with the command-line flags args would make, as the render
// subcommand does: the flags parsed with no environment, then Render.
func renderArgs(t *testing.T, machine string, args ...string) ([]byte, error) {
	t.Helper()
	opts, err := config.ParseArgs(args, func(string) (string, bool) { return "", false }, nil)
	if err != nil {
		t.Fatalf("ParseArgs: %v", err)
	}
	_, m, err := ParseConfig(machine, opts)
	if err != nil {
		return nil, err
	}
	return Render(m)
}

// Render shows exactly what a node boots with: the merged user data and the network data, in the Secret.
func TestRenderGolden(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "user-data")
	if err := os.WriteFile(file, []byte(rancherFile), 0o600); err != nil {
		t.Fatal(err)
	}
	userData := "#cloud-config\n# keep the clock right\ntimezone: Europe/Berlin\nhostname: pool-wide\npackages: [htop]\n"
	network := "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n"
	got, err := renderArgs(t, "gc1-pool1-abcde-fghij",
		"--harvester-vm-namespace", "team-a", "--harvester-cluster-name", "gc1",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-name", "default/vm-untag", "--harvester-cloud-config", file,
		"--harvester-user-data", base64.StdEncoding.EncodeToString([]byte(userData)),
		"--harvester-network-data", network,
		"--harvester-ssh-password", `p@ss: "word" #1`)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	out := string(got)
	for _, want := range []string{"timezone: Europe/Berlin", "hostname: gc1-pool1-abcde-fghij", "sh /usr/local/custom_script/install.sh",
		"qemu-guest-agent", placeholderSSHKey, "networkdata: |", "dhcp4: true", "networkDataSecretRef"} {
		if !strings.Contains(out, want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/rancher-flow.yaml", []byte(out))
}

// With a pool, render shows the range's first address in the network data (merged into the user's, which
// configures the second NIC) and the MAC it matches on the VM's first interface.
func TestRenderGoldenIPPool(t *testing.T) {
	got, err := renderArgs(t, "gc1-pool1-abcde-fghij",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-info", `{"interfaces":[{"networkName":"default/vm-vlan10"},{"networkName":"default/storage","macAddress":"52:54:00:00:00:02"}]}`,
		"--harvester-network-data", "version: 2\nethernets:\n  storage:\n    match: {macaddress: \"52:54:00:00:00:02\"}\n    mtu: 9000\n    dhcp4: true\n",
		"--harvester-ip-pool", "10.10.0.0/24", "--harvester-ip-pool-gateway", "10.10.0.1", "--harvester-ip-pool-dns", "10.10.0.2,10.10.0.3")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	mac := StaticMAC(config.Ref{Namespace: "default", Name: "vm-vlan10"}, netip.MustParseAddr("10.10.0.4"))
	for _, want := range []string{"# The address is allocated at create from 10.10.0.1-10.10.0.254/24; shown: the range's first.",
		`- "10.10.0.4/24"`, `macaddress: "` + mac + `"`, "macAddress: " + mac, "mtu: 9000", "networkDataSecretRef",
		config.AnnotationIPAllocation + ": default/ip-vm-vlan10-10-10-0-4"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/ip-pool.yaml", got)
}

// With a lease, render shows the first NIC's DHCP entry (beside the user's for the second NIC), matched by the MAC
// address the VM's first interface gets, and says where the address comes from and that the MAC is derived anew.
func TestRenderGoldenLeasePool(t *testing.T) {
	got, err := renderArgs(t, "gc1-pool1-abcde-fghij",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-info", `{"interfaces":[{"networkName":"default/vm-vlan10"},{"networkName":"default/storage","macAddress":"52:54:00:00:00:02"}]}`,
		"--harvester-network-data", "version: 2\nethernets:\n  storage:\n    match: {macaddress: \"52:54:00:00:00:02\"}\n    mtu: 9000\n",
		"--harvester-ip-pool-name", "vm-vlan10")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	mac := LeaseMAC(config.Ref{Namespace: "default", Name: "vm-vlan10"}, config.Ref{Namespace: "default", Name: "gc1-pool1-abcde-fghij"}, "")
	for _, want := range []string{"# The address is leased at create from IPPool default/vm-vlan10 of Harvester's managed DHCP",
		`macaddress: "` + mac + `"`, "dhcp4: true", "macAddress: " + mac, "mtu: 9000", "networkDataSecretRef",
		config.AnnotationIPLeasePool + ": default/vm-vlan10"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/ip-pool-name.yaml", got)
}

// DNS search domains join the DNS servers under nameservers in the first NIC's static entry (an IPv6 pool here,
// so the existing IPv4 golden stays as it was).
func TestRenderGoldenIPPoolDNSSearch(t *testing.T) {
	got, err := renderArgs(t, "gc1-pool1-abcde-fghij",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-name", "default/vm-vlan10",
		"--harvester-ip-pool", "2001:db8:10::10-2001:db8:10::59/64", "--harvester-ip-pool-gateway", "2001:db8:10::1",
		"--harvester-ip-pool-dns", "2001:db8:10::53", "--harvester-ip-pool-dns-search", "corp.example.com,example.com")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, want := range []string{`- "2001:db8:10::10/64"`, "nameservers:", `- "2001:db8:10::53"`, "search:", "- corp.example.com", "- example.com"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/ip-pool-dns-search.yaml", got)
}

// Render shows the VM as --harvester-vm-patch leaves it, from a patch in a file.
func TestRenderGoldenVMPatch(t *testing.T) {
	file := filepath.Join(t.TempDir(), "patch.json")
	if err := os.WriteFile(file, []byte(vmPatchJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := renderArgs(t, "m1", "--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-name", "default/vm-untag", "--harvester-vm-patch", file)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, want := range []string{"evictionStrategy: LiveMigrate\n", "name: scratch", "capacity: 2Gi", "example.com/tier: gold"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/vm-patch.yaml", got)
}

// Problems in cloud-init input are reported against the flag that carries them.
func TestRenderReportsCloudInitProblems(t *testing.T) {
	_, err := renderArgs(t, "m1", "--harvester-image-name", "img", "--harvester-disk-size", "1",
		"--harvester-network-name", "net", "--harvester-ssh-password", "line\nbreak",
		"--harvester-network-data", "network: {version: 1, config: [{type: physical}]}",
		"--harvester-cloud-config", "/nonexistent/user-data")
	var cerr *config.ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a ConfigError, got %v", err)
	}
	for _, want := range []string{"--harvester-ssh-password:", "--harvester-network-data:", "--harvester-cloud-config:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
