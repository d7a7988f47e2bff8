package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// renderArgs are a valid machine for the render verb.
var renderArgs = []string{"render", "--machine-name", "m1", "--harvester-image-name", "default/ubuntu", "--harvester-disk-size", "40",
	"--harvester-network-name", "default/vlan1"}

// cloudProviderArgs are a valid command line of the cloud-provider-config verb.
var cloudProviderArgs = []string{"cloud-provider-config", "--namespace", "default", "--cluster-name", "gc1"}

// credentialVerb gives a verb a kubeconfig as content, the way a user or Rancher would.
type credentialVerb struct {
	name  string
	field string // the flag or variable the refusal names
	run   func(kubeconfig string) (env, args []string)
}

// credentialVerbs are every verb that reads a kubeconfig given as content: check and cloud-provider-config from
// the environment (Rancher's way, plain and base64), render from the create flag and the guest's kubeconfig flag.
var credentialVerbs = []credentialVerb{
	{"check", "--harvester-kubeconfig-content: ", func(k string) ([]string, []string) {
		return []string{"HARVESTER_KUBECONFIG_CONTENT=" + k}, checkArgs
	}},
	{"check, base64", "--harvester-kubeconfig-content: ", func(k string) ([]string, []string) {
		return []string{"HARVESTER_KUBECONFIG_CONTENT=" + base64.StdEncoding.EncodeToString([]byte(k))}, checkArgs
	}},
	{"cloud-provider-config", "$HARVESTER_KUBECONFIG_CONTENT: ", func(k string) ([]string, []string) {
		return []string{"HARVESTER_KUBECONFIG_CONTENT=" + k}, cloudProviderArgs
	}},
	{"render, the credential", "--harvester-kubeconfig-content: ", func(k string) ([]string, []string) {
		return nil, append(append([]string{}, renderArgs...), "--harvester-kubeconfig-content", k)
	}},
	{"render, the guest's kubeconfig", "--harvester-cloud-provider-config: ", func(k string) ([]string, []string) {
		return nil, append(append([]string{}, renderArgs...), "--harvester-cloud-provider-config", k)
	}},
}

// emptyNamed is a kubeconfig with which client-go's ClientConfig uses the user and the cluster named "" (see
// harvester/config's emptyNamedShapes): current is its current-context line, user the "" user's fields.
func emptyNamed(current, server, user string) string {
	return `apiVersion: v1
kind: Config
clusters: [{name: "", cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}, {name: h, cluster: {server: "https://192.0.2.11:6443"}}]
users: [{name: "", user: {` + user + `}}, {name: u, user: {token: inline}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
` + current
}

// A credential whose current-context is missing, empty or names no context would have client-go use the user and
// the cluster named "": every verb refuses it, naming current-context, before anything reads a file the user
// names, runs its plugin or reaches its server. A token file and a client certificate on this machine are never
// sent; /dev/zero neither hangs nor grows the plugin; a FIFO does not hang it.
func TestEmptyNamedCredentialIsRefusedByEveryVerb(t *testing.T) {
	const maxRSS = 100 << 20
	srv := newListener(t, nil)
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte("token-from-disk"), 0o600)
	cert, key := clientCertificate(t, dir)
	fifo, _ := hostile.SpecialFiles(t)
	marker := filepath.Join(dir, "marker")
	users := []struct{ name, user string }{
		{"tokenFile", "tokenFile: " + token},
		{"client certificate files", "client-certificate: " + cert + ", client-key: " + key},
		{"exec", execUser(marker, "from-exec")},
		{"/dev/zero as tokenFile", "tokenFile: /dev/zero"},
		{"FIFO as client certificate", "client-certificate: " + fifo + ", client-key: " + fifo},
		{"FIFO as tokenFile", "tokenFile: " + fifo},
	}
	for _, current := range []string{"", "current-context: \"\"\n", "current-context: nowhere\n"} {
		for _, u := range users {
			kubeconfig := emptyNamed(current, srv.URL, u.user)
			for _, v := range credentialVerbs {
				t.Run(strings.TrimSpace(current)+" "+u.name+", "+v.name, func(t *testing.T) {
					env, args := v.run(kubeconfig)
					p := runPlugin(t, 30*time.Second, env, args...)
					out := p.stdout + p.stderr
					if p.code != 1 || !strings.Contains(out, v.field) || !strings.Contains(out, "current-context") {
						t.Errorf("want exit 1 and a refusal of %s naming current-context, got exit %d:\n%s", v.field, p.code, out)
					}
					if got := srv.reached(); got != "" {
						t.Errorf("the server was reached: %s", got)
					}
					if _, err := os.Stat(marker); !os.IsNotExist(err) {
						t.Fatal("the exec plugin ran: its marker file exists")
					}
					if p.took > 10*time.Second || p.peakRSS > maxRSS {
						t.Errorf("the plugin took %v and grew to %d MB", p.took, p.peakRSS>>20)
					}
				})
			}
		}
	}
}

// The plugin, as rancher-machine runs it, refuses such a credential when the flags are set (given on the command
// line or from the environment, and as the guest's kubeconfig), and when a machine's saved state holds one: its
// exec plugin never runs.
func TestEmptyNamedCredentialIsRefusedByThePlugin(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	for _, current := range []string{"", "current-context: \"\"\n", "current-context: nowhere\n"} {
		kubeconfig := emptyNamed(current, "https://192.0.2.10:6443", execUser(marker, "from-exec"))
		t.Setenv("HARVESTER_KUBECONFIG_CONTENT", kubeconfig)
		d := startPlugin(t, "m1")
		for _, flag := range []string{config.FlagKubeconfigContent, config.FlagCloudProviderConfig} {
			err := d.SetConfigFromFlags(rancherMachineOptions(d.GetCreateFlags(), map[string]any{flag: kubeconfig,
				config.FlagImageName: "ubuntu", config.FlagDiskSize: 40, config.FlagNetworkName: "vlan1"}))
			if err == nil || !strings.Contains(err.Error(), "--"+flag+": is refused: ") || !strings.Contains(err.Error(), "current-context") {
				t.Errorf("%q, --%s: want the credential refused naming current-context, got %v", current, flag, err)
			}
		}
		saved := loadedWith(t, kubeconfig)
		if _, err := saved.GetState(); err == nil || !strings.Contains(err.Error(), "current-context") {
			t.Errorf("%q saved with the machine: want it refused naming current-context, got %v", current, err)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the exec plugin ran: its marker file exists")
	}
}
