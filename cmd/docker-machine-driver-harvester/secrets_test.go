package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"
	"github.com/rancher/machine/libmachine/mcnflag"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

const (
	// longSecret is a token: Redact hides it wherever a message puts it, quoted or not.
	longSecret = "PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj"
	// shortSecret is a password no pattern recognises: planted where a credential goes, only messages that never
	// quote such a value keep it out.
	shortSecret = "hunter2x"
)

// secretForms are the shapes a secret pasted into the wrong place takes: a bare token, a YAML line, a URL with a
// password, an Authorization header, JSON, two lines.
var secretForms = []string{longSecret, "token: " + longSecret, "https://admin:" + longSecret + "@192.0.2.1:6443", "Bearer " + longSecret,
	`{"token":"` + longSecret + `"}`, "x\n" + longSecret}

// noSecret fails the test when any of texts holds a planted secret.
func noSecret(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		for _, s := range []string{longSecret, shortSecret} {
			if strings.Contains(text, s) {
				t.Errorf("%s: the output holds a planted secret:\n%s", what, text)
				return
			}
		}
	}
}

// secretKubeconfigs are kubeconfigs that fail each way a parse or client-go can fail, with the long secret in
// their names and keys and the short one in their credentials.
var secretKubeconfigs = map[string]string{
	"two users of one name": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443"}}]`,
		`[{name: u, user: {token: LONG}}, {name: u, user: {username: admin, password: SHORT}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"two clusters of one name": kubeconfigOf(`[{name: h, cluster: {server: "https://admin:SHORT@192.0.2.10:6443"}}, {name: h, cluster: {server: "https://192.0.2.11"}}]`,
		`[{name: u, user: {token: SHORT}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"two contexts of one name": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443"}}]`,
		`[{name: u, user: {token: SHORT}}]`,
		`[{name: h, context: {cluster: h, user: u, namespace: SHORT}}, {name: h, context: {cluster: SHORT, user: u}}]`),
	"two extensions of one name": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443"}}]`,
		`[{name: u, user: {token: SHORT, extensions: [{name: e, extension: {a: SHORT}}, {name: e, extension: {a: SHORT}}]}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"a key that is a list":    "? [SHORT, LONG]\n: SHORT\n",
	"a key given twice":       "apiVersion: v1\nkind: Config\nSHORT: 1\nSHORT: 2\n",
	"a kind of no kubeconfig": "apiVersion: v1\nkind: LONG\n",
	"bad base64 data": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443"}}]`,
		`[{name: u, user: {client-certificate-data: "SHORT!", client-key-data: "SHORT!"}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"a proxy URL that does not parse": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443", proxy-url: "http://admin:SHORT@pro xy"}}]`,
		`[{name: u, user: {token: SHORT}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"two authentication methods": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443"}}]`,
		`[{name: u, user: {token: SHORT, username: admin, password: SHORT}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"a dangling current-context": `apiVersion: v1
kind: Config
clusters: [{name: "", cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: "", user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: SHORT, args: [LONG], interactiveMode: Never}}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: LONG
`,
	"an exec user": kubeconfigOf(`[{name: h, cluster: {server: "https://192.0.2.10:6443"}}]`,
		`[{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/SHORT, args: [LONG], env: [{name: T, value: SHORT}]}}}]`,
		`[{name: h, context: {cluster: h, user: u}}]`),
	"an exec user named by a token": `apiVersion: v1
kind: Config
clusters: [{name: LONG, cluster: {server: "https://192.0.2.10:6443", certificate-authority: /nonexistent/ca}}]
users: [{name: LONG, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/false, args: [SHORT]}}}]
contexts: [{name: LONG, context: {cluster: LONG, user: LONG}}]
current-context: LONG
`,
	"a syntax error":    "apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: SHORT}}\n  oops: [SHORT\n",
	"a second document": "apiVersion: v1\nkind: Config\n---\nusers: [{name: u, user: {token: SHORT}}]\n",
}

// kubeconfigOf is a kubeconfig of the given clusters, users and contexts (YAML flow sequences) whose current
// context is h.
func kubeconfigOf(clusters, users, contexts string) string {
	return "apiVersion: v1\nkind: Config\nclusters: " + clusters + "\nusers: " + users + "\ncontexts: " + contexts + "\ncurrent-context: h\n"
}

// withSecrets fills a kubeconfig's LONG and SHORT.
func withSecrets(kubeconfig string) string {
	return strings.NewReplacer("LONG", longSecret, "SHORT", shortSecret).Replace(kubeconfig)
}

// Every verb, fed secrets in every position it parses, prints none of them, on stdout or stderr: the command
// line (each flag, the machine name, an int flag, an unknown flag, a stray argument, the command), the
// environment, every kubeconfig given as content (the credential, the guest's) failing each way, the user's own
// kubeconfig file, the machine config's keys and values.
func TestNoVerbQuotesASecret(t *testing.T) {
	runs := 0
	verb := func(what string, env []string, args ...string) {
		t.Helper()
		p := runPlugin(t, 30*time.Second, env, args...)
		if p.code == 0 && args[0] == "render" {
			noSecret(t, what, p.stderr) // render's output is the objects, the user's values in them
		} else {
			noSecret(t, what, p.stdout, p.stderr)
		}
		runs++
	}
	// The command line of render and check: each string flag, an int flag, an unknown flag and a stray argument.
	for _, f := range config.CreateFlags() {
		if _, ok := f.(*mcnflag.StringFlag); !ok {
			continue
		}
		for _, form := range secretForms[:3] {
			verb("render --"+f.String(), nil, append(append([]string{}, renderArgs...), "--"+f.String(), form)...)
		}
	}
	for _, form := range secretForms {
		for _, base := range [][]string{renderArgs, checkArgs} {
			verb(base[0]+" int flag", nil, append(append([]string{}, base...), "--harvester-cpu-count", form)...)
			verb(base[0]+" unknown flag", nil, append(append([]string{}, base...), "--"+form)...)
			verb(base[0]+" stray argument", nil, append(append([]string{}, base...), form)...)
			verb(base[0]+" environment", []string{"HARVESTER_CPU_COUNT=" + form, "HARVESTER_VM_NAMESPACE=" + form}, base...)
		}
		verb("render --machine-name", nil, append(append([]string{}, renderArgs...), "--machine-name", form)...)
		verb("check --machine-name", nil, append(append([]string{}, checkArgs...), "--machine-name", form)...)
		verb("check --machine-config path", nil, append(append([]string{}, checkArgs...), "--machine-config", form)...)
		verb("the command", nil, form)
		verb("flags --driver", nil, "flags", "--driver", form)
		verb("flags, unknown flag", nil, "flags", "--"+form)
		verb("check --count", nil, append(append([]string{}, checkArgs...), "--count", form)...)
		for _, f := range []string{"namespace", "cluster-name", "service-account", "server", "output", "distribution", "kubeconfig"} {
			verb("cloud-provider-config --"+f, nil, append(append([]string{}, cloudProviderArgs...), "--"+f, form)...)
		}
		verb("cloud-provider-config, a bool flag", nil, append(append([]string{}, cloudProviderArgs...), "--drop-in="+form)...)
		verb("cloud-provider-config, unknown flag", nil, append(append([]string{}, cloudProviderArgs...), "--"+form)...)
	}
	// Every kubeconfig given as content, failing each way, to every verb that reads one.
	for name, k := range secretKubeconfigs {
		for _, v := range credentialVerbs {
			env, args := v.run(withSecrets(k))
			verb(name+", "+v.name, env, args...)
		}
		// The user's own file, through $KUBECONFIG and cloud-provider-config --kubeconfig.
		file := filepath.Join(t.TempDir(), "config")
		os.WriteFile(file, []byte(withSecrets(k)), 0o600)
		verb(name+", $KUBECONFIG to check", []string{"KUBECONFIG=" + file}, checkArgs...)
		verb(name+", cloud-provider-config --kubeconfig", nil, append(append([]string{}, cloudProviderArgs...), "--kubeconfig", file)...)
	}
	// The machine config's keys and values.
	for name, mc := range map[string]string{
		"a secret as a key":          poolYAML + "SHORT: x\nLONG: y\n",
		"a password given twice":     poolYAML + "sshPassword: SHORT\nsshPassword: SHORT\n",
		"a key given twice":          poolYAML + "SHORT: a\nSHORT: b\n",
		"a kind that is a secret":    strings.Replace(poolYAML, "kind: HarvesterConfig", "kind: LONG", 1),
		"an apiVersion of secrets":   strings.Replace(poolYAML, "apiVersion: rke-machine-config.cattle.io/v1", "apiVersion: https://a:LONG@h", 1),
		"a value of the wrong type":  poolYAML + "sshPassword: [SHORT]\n",
		"a whole number that is not": strings.Replace(poolYAML, `diskSize: "40"`, `diskSize: "SHORT"`, 1),
		"a key that is a list":       poolYAML + "? [SHORT]\n: SHORT\n",
		"a syntax error":             poolYAML + "sshPassword: SHORT\n  oops: [SHORT\n",
		"a second document":          poolYAML + "---\nsshPassword: SHORT\n",
	} {
		file := filepath.Join(t.TempDir(), "pool.yaml")
		os.WriteFile(file, []byte(withSecrets(mc)), 0o600)
		verb("check --machine-config, "+name, nil, "check", "--machine-name", "m1", "--machine-config", file)
	}
	// A credential that works: check against a server that answers 404 names neither the token nor the password.
	srv := newListener(t, nil)
	verb("check against a server", []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfigFor(srv.URL, "token: "+shortSecret, ", insecure-skip-tls-verify: true")}, checkArgs...)
	t.Logf("%d runs of the plugin with a planted secret", runs)
}

// The plugin, as rancher-machine runs it: a secret in each flag's value never comes back in SetConfigFromFlags'
// error or in the state it gives rancher-machine to save; a credential from the environment is never saved; a
// saved credential that fails each way is reported without its content when the machine is next used.
func TestPluginQuotesNoSecret(t *testing.T) {
	credential := kubeconfigFor("https://192.0.2.10:6443", "token: "+shortSecret, "")
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", credential)
	d := startPlugin(t, "m1")
	flags := d.GetCreateFlags()
	valid := map[string]any{config.FlagKubeconfigContent: credential, config.FlagImageName: "ubuntu", config.FlagDiskSize: 40,
		config.FlagNetworkName: "vlan1"}
	for _, f := range flags {
		if _, ok := f.(*mcnflag.StringFlag); !ok {
			continue
		}
		for _, form := range append(append([]string{}, secretForms...), withSecrets(secretKubeconfigs["two users of one name"])) {
			set := map[string]any{}
			for k, v := range valid {
				set[k] = v
			}
			set[f.String()] = form
			err := d.SetConfigFromFlags(rancherMachineOptions(flags, set))
			noSecret(t, "SetConfigFromFlags, --"+f.String(), fmt.Sprint(err))
			// The machine's namespace and cluster name are saved by design (Remove needs them): a value of
			// theirs that passed as a name is no secret.
			if raw, _ := savedState(t, d); err != nil || (f.String() != config.FlagVMNamespace && f.String() != config.FlagClusterName) {
				noSecret(t, "the saved state, --"+f.String(), string(raw))
			}
			if err := d.SetConfigFromFlags(rancherMachineOptions(flags, valid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, k := range secretKubeconfigs {
		saved := loadedWith(t, withSecrets(k))
		// rancher-machine's status and rm on a machine of its store: each needs the credential.
		_, stateErr := saved.GetState()
		removeErr := saved.Remove()
		if stateErr == nil || removeErr == nil || !strings.Contains(stateErr.Error(), "the Harvester credential saved with this machine") {
			t.Errorf("%s: the saved credential was not refused: %v; %v", name, stateErr, removeErr)
		}
		noSecret(t, "a saved credential, "+name, fmt.Sprint(stateErr), fmt.Sprint(removeErr))
	}
}

// loadedWith starts the plugin for a machine whose saved state holds kubeconfig as its credential, with none in
// the environment, as rancher-machine loads a machine from its store.
func loadedWith(t *testing.T, kubeconfig string) *rpcdriver.RPCClientDriver {
	t.Helper()
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "")
	os.Unsetenv("HARVESTER_KUBECONFIG_CONTENT")
	raw, _ := json.Marshal(struct {
		*drivers.BaseDriver
		KubeConfigContent string
	}{&drivers.BaseDriver{MachineName: "m1", StorePath: t.TempDir()}, kubeconfig})
	return startPluginWith(t, raw)
}
