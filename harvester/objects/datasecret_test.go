package objects

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

// Render reads no cluster: user data and network data kept in Secrets are placeholders naming each Secret and the
// keys the create reads, the user data's merged where the user's part goes, and the VM refers to the network
// data as a create's VM does.
func TestRenderGoldenDataSecrets(t *testing.T) {
	file := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(file, []byte(rancherFile), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := renderArgs(t, "gc1-pool1-abcde-fghij", "--harvester-vm-namespace", "team-a", "--harvester-cluster-name", "gc1",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40",
		"--harvester-network-name", "default/vm-untag", "--harvester-cloud-config", file,
		"--harvester-user-data-secret", "pool1-cloud-init", "--harvester-network-data-secret", "pool1-cloud-init:net")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, want := range []string{
		"# <the user data of Secret team-a/pool1-cloud-init (key userdata or userData), read and merged here at create>",
		"networkdata: |\n    # <the network-config of Secret team-a/pool1-cloud-init (key net), read at create>",
		"sh /usr/local/custom_script/install.sh", "qemu-guest-agent", "networkDataSecretRef",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("render output lacks %q", want)
		}
	}
	golden.Assert(t, "render/data-secrets.yaml", got)
}

// User data read from a Secret is merged exactly as the same user data given inline: with the driver's parts
// (guest agent, SSH key, hostname), Rancher's install script and the cloud-provider files, byte for byte.
func TestSecretUserDataMergesAsInline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(file, []byte(rancherFile), 0o600); err != nil {
		t.Fatal(err)
	}
	guest := []byte(strings.Replace(configtest.Kubeconfig, "not-a-real-token", "guest-token", 1))
	base := func(kv ...any) *config.Config {
		t.Helper()
		o := configtest.With(configtest.MinimalOptions(), config.FlagCloudConfig, file,
			config.FlagCloudProviderConfig, base64.StdEncoding.EncodeToString(guest), config.FlagCloudProviderDropIn, true)
		cfg, _, err := ParseConfig("gc1-pool1-abcde-fghij", configtest.With(o, kv...))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for name, doc := range map[string]string{
		"cloud-config": "#cloud-config\n# registry credentials\nwrite_files:\n- path: /etc/rancher/rke2/registries.yaml\n  content: 'token: PLANTED'\nruncmd: [echo first]\npackages: [htop]\n",
		"script":       "#!/bin/sh\necho PLANTED > /root/marker\n",
		"MIME":         "Content-Type: multipart/mixed; boundary=\"b\"\nMIME-Version: 1.0\n\n--b\nContent-Type: text/cloud-config\n\ntimezone: Europe/Berlin\n--b\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho PLANTED\n--b--\n",
	} {
		t.Run(name, func(t *testing.T) {
			inline, err := UserData(base(config.FlagUserData, base64.StdEncoding.EncodeToString([]byte(doc))), []string{"ssh-ed25519 AAAA driver"}, guest)
			if err != nil {
				t.Fatal(err)
			}
			fromSecret := base(config.FlagUserDataSecret, "ud").WithSecretData(&config.SecretValue{Key: "userdata", Data: []byte(doc)}, nil)
			got, err := UserData(fromSecret, []string{"ssh-ed25519 AAAA driver"}, guest)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, inline) {
				t.Errorf("from a Secret:\n%s\ninline:\n%s", got, inline)
			}
			for _, want := range []string{"qemu-guest-agent", "install.sh", "/etc/kubernetes/cloud-config", "90-harvester-cloud-provider.yaml"} {
				if !bytes.Contains(got, []byte(want)) {
					t.Errorf("the merged user data lacks %s:\n%s", want, got)
				}
			}
		})
	}
}

// What cloud-init would refuse in user data read from a Secret is filed under --harvester-user-data-secret, naming
// the Secret and its key, as the same problem of inline user data is filed under --harvester-user-data; a value
// that is never shown.
func TestSecretUserDataProblemsNameTheSecret(t *testing.T) {
	cfg, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagUserDataSecret, "ud"))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		"#cloud-config\nruncmd: oops\n":                                        "--harvester-user-data-secret: Secret default/ud, key userData: runcmd: must be a list, not a string",
		"#cloud-config\nbootcmd: [PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5\n": "--harvester-user-data-secret: Secret default/ud, key userData: not valid YAML",
		"just text": "--harvester-user-data-secret: Secret default/ud, key userData: not a format cloud-init reads",
		"#cloud-config\n#" + strings.Repeat("x", 1<<20): "--harvester-user-data-secret: Secret default/ud, key userData: it is 1048591 bytes, over the 1 MiB limit",
	} {
		var p config.Problems
		CheckUserData(&p, cfg.WithSecretData(&config.SecretValue{Key: "userData", Data: []byte(doc)}, nil))
		got := p.Err()
		if got == nil || !strings.Contains(got.Error(), want) {
			t.Errorf("problems %v, want %q", got, want)
			continue
		}
		if strings.Contains(got.Error(), "PLANTED") {
			t.Errorf("the problem quotes the user data: %v", got)
		}
	}
	// The cloud-init Secret over what a Secret holds names the Secret's flag too.
	big := cfg.WithSecretData(&config.SecretValue{Key: "userdata", Data: []byte("#cloud-config\n")}, nil)
	if _, err := CloudInitSecret(big, bytes.Repeat([]byte("#"), MaxSecretData), nil); err == nil ||
		!strings.HasPrefix(strings.TrimPrefix(err.Error(), "invalid machine configuration: "), "--harvester-user-data-secret: the cloud-init Secret would hold") {
		t.Errorf("an oversized cloud-init Secret: %v", err)
	}
}
