package harvester

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// render shows exactly what a node boots with: the merged user data and the network data, in the Secret.
func TestRenderGolden(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "user-data")
	if err := os.WriteFile(file, []byte(rancherFile), 0o600); err != nil {
		t.Fatal(err)
	}
	userData := "#cloud-config\n# keep the clock right\ntimezone: Europe/Berlin\nhostname: pool-wide\npackages: [htop]\n"
	network := "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n"
	var stdout, stderr strings.Builder
	code := RenderCommand([]string{"--machine-name", "gc1-pool1-abcde-fghij",
		"--harvester-vm-namespace", "team-a", "--harvester-cluster-name", "gc1",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-name", "default/vm-untag", "--harvester-cloud-config", file,
		"--harvester-user-data", base64.StdEncoding.EncodeToString([]byte(userData)),
		"--harvester-network-data", network,
		"--harvester-ssh-password", `p@ss: "word" #1`,
	}, func(string) (string, bool) { return "", false }, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("render exited %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"timezone: Europe/Berlin", "hostname: gc1-pool1-abcde-fghij", "sh /usr/local/custom_script/install.sh",
		"qemu-guest-agent", placeholderSSHKey, "networkdata: |", "dhcp4: true", "networkDataSecretRef"} {
		if !strings.Contains(out, want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/rancher-flow.yaml", []byte(out))
}

func TestRenderReportsCloudInitProblems(t *testing.T) {
	var stdout, stderr strings.Builder
	code := RenderCommand([]string{"--machine-name", "m1", "--harvester-image-name", "img", "--harvester-disk-size", "1",
		"--harvester-network-name", "net", "--harvester-ssh-password", "line\nbreak",
		"--harvester-network-data", "network: {version: 1, config: [{type: physical}]}",
		"--harvester-cloud-config", "/nonexistent/user-data"}, func(string) (string, bool) { return "", false }, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--harvester-ssh-password:", "--harvester-network-data:", "--harvester-cloud-config:"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
