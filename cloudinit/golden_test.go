package cloudinit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

// Public keys as the driver passes them: the generated key and a Harvester key pair's key.
var (
	driverKey  = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDdriverGeneratedKey docker-machine"
	keyPairKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHarvesterKeyPair user@example.com"
)

// rancherHostname is the hostname in testdata/rancher-install.yaml (rancher-machine's --hostname-override or
// machine name).
const rancherHostname = "gc1-pool1-abcde-x7k2p"

// installCommand is the runcmd entry rancher-machine adds for Rancher's install script.
const installCommand = "sh /usr/local/custom_script/install.sh"

// goldenCase is one rendering pinned by testdata/userdata/<name>/want. The user data is read from
// testdata/userdata/<name>/user-data when present, Rancher's document from testdata/rancher-install.yaml.
type goldenCase struct {
	name    string
	in      Input
	rancher bool
	// What cloud-init must make of the output (checked by TestGoldenAsCloudInitReadsIt).
	hostname    string   // the merged cloud-config's hostname
	scripts     []string // the user scripts, in the order scripts-user runs them (runcmd among them)
	partTypes   []string // the parts cloud-init sees, in order
	wantKeys    []string // top-level keys the merged cloud-config must have
	absentKeys  []string // top-level keys it must not have
	runcmdFirst any      // the first runcmd entry, when it matters
}

var goldenCases = []goldenCase{
	{name: "empty", in: Input{Hostname: "m-empty", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		hostname: "m-empty", scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"ssh_authorized_keys", "disable_root", "packages"}},
	{name: "rancher-only", in: Input{Hostname: "ignored-rancher-names-it", SSHAuthorizedKeys: []string{driverKey, keyPairKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"write_files", "packages"}, runcmdFirst: []any{"systemctl", "enable", "--now", "qemu-guest-agent.service"}},
	{name: "ui-default-rancher", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"package_update", "packages"}},
	{name: "user-hostname-rancher", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"timezone", "prefer_fqdn_over_hostname"}, absentKeys: []string{"fqdn", "preserve_hostname"}},
	{name: "comments-anchors", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"bootcmd", "users", "x-common-cmds"}},
	{name: "script-rancher", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"part-002", "runcmd"},
		partTypes: []string{"text/cloud-config", "text/x-shellscript"}},
	{name: "mime-input", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"prepare.sh", "runcmd"},
		partTypes: []string{"text/cloud-config", "text/x-shellscript", "text/jinja2"},
		wantKeys:  []string{"packages", "write_files"}, runcmdFirst: "echo \"instance i-harvester-test\""},
	{name: "jinja-header", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/jinja2"}},
	{name: "jinja-part", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config", "text/jinja2"},
		runcmdFirst: "echo \"instance i-harvester-test\""},
	{name: "password-special", in: Input{Hostname: "m-pw", SSHAuthorizedKeys: []string{driverKey},
		SSHPassword: `p@ss: #not-a-comment 'single' "double" \back {{x}} yes`, InstallGuestAgent: true},
		hostname: "m-pw", scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"chpasswd", "ssh_pwauth"}},
	{name: "non-root-user", in: Input{Hostname: "m-nr", SSHUser: "rancher", SSHAuthorizedKeys: []string{driverKey, keyPairKey},
		SSHPassword: "secret", InstallGuestAgent: false},
		hostname: "m-nr", partTypes: []string{"text/cloud-config"}, wantKeys: []string{"users", "chpasswd"},
		absentKeys: []string{"disable_root", "packages", "runcmd"}},
	{name: "no-guest-agent", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: false},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"apt"}, absentKeys: []string{"packages"}, runcmdFirst: installCommand},
	{name: "driver-files", in: Input{Hostname: "m-files", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true,
		WriteFiles: []File{{Path: "/etc/kubernetes/cloud-config", Content: "apiVersion: v1\nkind: Config\n", Owner: "root:root", Permissions: "0600"}}},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"write_files"}},
	{name: "mime-version-text", in: Input{Hostname: "m-mv", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		hostname: "m-mv", scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"}, wantKeys: []string{"write_files"}},
	{name: "headerless-yaml", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"},
		wantKeys: []string{"packages"}},
	{name: "gzip-input", in: Input{Hostname: "m1", SSHAuthorizedKeys: []string{driverKey}, InstallGuestAgent: true},
		rancher: true, hostname: rancherHostname, scripts: []string{"runcmd"}, partTypes: []string{"text/cloud-config"}},
}

// input is the case's Input with the user data and Rancher's document read from testdata.
func (c goldenCase) input(t testing.TB) Input {
	t.Helper()
	in := c.in
	if b, err := os.ReadFile(filepath.Join("testdata", "userdata", c.name, "user-data")); err == nil {
		in.User = b
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if c.rancher {
		b, err := os.ReadFile(filepath.Join("testdata", "rancher-install.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		in.Rancher = b
	}
	return in
}

// golden names the case's golden file for golden.Assert; wantPath is its path.
func (c goldenCase) golden() string   { return filepath.Join("userdata", c.name, "want") }
func (c goldenCase) wantPath() string { return filepath.Join("testdata", c.golden()) }

func TestUserDataGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := UserData(c.input(t))
			if err != nil {
				t.Fatalf("UserData: %v", err)
			}
			again, err := UserData(c.input(t))
			if err != nil || !bytes.Equal(got, again) {
				t.Fatalf("UserData is not deterministic")
			}
			golden.Assert(t, c.golden(), got)
		})
	}
}
