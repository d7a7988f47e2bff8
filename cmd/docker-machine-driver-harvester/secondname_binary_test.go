package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

// binaryRun is one run of the built plugin installed under some name.
type binaryRun struct {
	stdout, stderr string
	code           int
}

// runAs runs the built plugin installed as docker-machine-driver-<suffix> (a link to the same file, as
// rancher-machine finds a plugin on $PATH) with args and only the environment env besides PATH and an empty HOME.
func runAs(t *testing.T, suffix string, env []string, args ...string) binaryRun {
	t.Helper()
	link := filepath.Join(t.TempDir(), identity.BinaryPrefix+suffix)
	if err := os.Symlink(pluginBin, link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, link, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := binaryRun{stdout: out.String(), stderr: errOut.String()}
	if exit, ok := err.(*exec.ExitError); ok {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// credentialListeners are three API servers, each reached only through one way of giving a credential: the
// second name's variable, the canonical name's variable, $KUBECONFIG.
type credentialListeners struct{ own, canonical, kubeconfig *listener }

func newCredentialListeners(t *testing.T) (credentialListeners, func(ownVar string) []string) {
	l := credentialListeners{own: newListener(t, nil), canonical: newListener(t, nil), kubeconfig: newListener(t, nil)}
	kubeconfigFile := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfigFile, []byte(kubeconfigFor(l.kubeconfig.URL, "token: from-kubeconfig", ", insecure-skip-tls-verify: true")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(ownVar string) []string {
		return []string{
			ownVar + "=" + kubeconfigFor(l.own.URL, "token: from-own-variable", ", insecure-skip-tls-verify: true"),
			"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfigFor(l.canonical.URL, "token: from-canonical-variable", ", insecure-skip-tls-verify: true"),
			"KUBECONFIG=" + kubeconfigFile,
		}
	}
	return l, env
}

// Installed under a name whose suffix Rancher would not carry intact, the binary is no driver at all: the plugin
// and every verb refuse to start, say the rule, print nothing on stdout but, as a plugin, the rule in place of its
// address, and reach no server, whatever credential the environment holds.
func TestRefusedNamesStartNothing(t *testing.T) {
	srv := newListener(t, nil)
	env := []string{"HARVESTER_KUBECONFIG_CONTENT=" + kubeconfigFor(srv.URL, "token: t", ", insecure-skip-tls-verify: true")}
	verbs := [][]string{
		{}, // the bare binary: Rancher's "is it executable" check
		{"version"}, {"help"}, {"flags", "--json"},
		{"render", "--machine-name", "m1", "--harvester-image-name", "img", "--harvester-network-name", "net"},
		{"check", "--machine-name", "m1", "--harvester-image-name", "img", "--harvester-network-name", "net"},
		{"cloud-provider-config", "--namespace", "default", "--cluster-name", "gc1"},
	}
	for _, suffix := range []string{"harv.x", "HARV", "", "härv", "hci-vm", "hci_vm", "2harv", "myuserdata", strings.Repeat("a", identity.MaxNameLength+1)} {
		t.Run(suffix, func(t *testing.T) {
			for _, args := range verbs {
				r := runAs(t, suffix, env, args...)
				if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, identity.NameRule) ||
					!strings.Contains(r.stderr, "Install it as docker-machine-driver-harvester") {
					t.Errorf("%v: want exit 1, nothing on stdout and the rule on stderr; got exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
				}
			}
			// As rancher-machine starts a plugin, with its token: in place of the RPC address, one line without a
			// colon, which rancher-machine's dial error quotes whole.
			r := runAs(t, suffix, append([]string{"MACHINE_PLUGIN_TOKEN=42"}, env...))
			if line := strings.TrimSuffix(r.stdout, "\n"); r.code != 1 || strings.ContainsAny(line, ":\n") ||
				!strings.Contains(line, identity.NameRule) || !strings.Contains(r.stderr, identity.NameRule) {
				t.Errorf("as a plugin: want exit 1 and the rule on one line without a colon; got exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
	if got := srv.reached(); got != "" {
		t.Errorf("a refused name reached the server of $HARVESTER_KUBECONFIG_CONTENT: %s", got)
	}
}

// A valid second name — letters, or letters and digits — is that driver in every verb: the version line and the
// help name it and its flags, flags --json declares its flags and variables, render and check read its flags and
// variables only, and cloud-provider-config takes its credential variable, never the canonical one's.
func TestEveryVerbUnderASecondName(t *testing.T) {
	for _, name := range []string{identity.Release, "harvester2"} {
		t.Run(name, func(t *testing.T) {
			upper := strings.ToUpper(name)
			if r := runAs(t, name, nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "docker-machine-driver-"+name+" ") {
				t.Errorf("version: exit %d, %q", r.code, r.stdout)
			}
			r := runAs(t, name, nil, "help")
			if r.code != 0 || !strings.Contains(r.stdout, `(driver name "`+name+`")`) || !strings.Contains(r.stdout, "[--"+name+"-... flags]") ||
				!strings.Contains(r.stdout, "kubectl get "+name+"config NAME") || strings.Contains(r.stdout, "harvester-") || strings.Contains(r.stdout, `"harvester"`) {
				t.Errorf("help under %s: exit %d\n%s", name, r.code, r.stdout)
			}
			r = runAs(t, name, nil, "flags", "--json")
			var doc flagsDoc
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Driver != name || len(doc.Flags) == 0 {
				t.Fatalf("flags --json under %s: exit %d, %v, driver %q", name, r.code, err, doc.Driver)
			}
			for _, f := range doc.Flags {
				if !strings.HasPrefix(f.Flag, name+"-") || !strings.HasPrefix(f.Env, upper+"_") || strings.Contains(f.Usage, "--harvester-") {
					t.Errorf("flags --json under %s: %+v", name, f)
				}
			}

			env := []string{upper + "_DISK_SIZE=12", "HARVESTER_DISK_SIZE=99", "HARVESTER_NETWORK_NAME=net"}
			r = runAs(t, name, env, "render", "--machine-name", "m1", "--"+name+"-image-name", "img", "--"+name+"-network-name", "net")
			if r.code != 0 || !strings.Contains(r.stdout, `"storage":"12Gi"`) {
				t.Errorf("render under %s: exit %d, stderr %q", name, r.code, r.stderr)
			}
			r = runAs(t, name, env, "render", "--machine-name", "m1", "--"+name+"-image-name", "img")
			if r.code != 1 || !strings.Contains(r.stderr, "--"+name+"-network-name") || strings.Contains(r.stderr, "harvester-") {
				t.Errorf("render under %s read $HARVESTER_NETWORK_NAME or named a canonical flag: exit %d, stderr %q", name, r.code, r.stderr)
			}
			r = runAs(t, name, nil, "check", "--machine-name", "m1", "--harvester-cpu-count", "2")
			if r.code != 2 || !strings.Contains(r.stderr, "flag provided but not defined: -harvester-cpu-count") || !strings.Contains(r.stderr, "[--"+name+"-... flags]") {
				t.Errorf("check under %s took a canonical flag: exit %d, stderr %q", name, r.code, r.stderr)
			}

			servers, credentials := newCredentialListeners(t)
			r = runAs(t, name, credentials(upper+"_KUBECONFIG_CONTENT"), "cloud-provider-config", "--namespace", "default", "--cluster-name", "gc1")
			if r.code != 1 || servers.own.reached() == "" || servers.canonical.reached() != "" || servers.kubeconfig.reached() != "" {
				t.Errorf("cloud-provider-config under %s: exit %d; reached through $%s_KUBECONFIG_CONTENT: %q, $HARVESTER_KUBECONFIG_CONTENT: %q, $KUBECONFIG: %q\n%s",
					name, r.code, upper, servers.own.reached(), servers.canonical.reached(), servers.kubeconfig.reached(), r.stderr)
			}
			if r := runAs(t, name, nil, "cloud-provider-config", "--help"); !strings.Contains(r.stderr, "usage: docker-machine-driver-"+name+" cloud-provider-config") ||
				!strings.Contains(r.stderr, "$"+upper+"_KUBECONFIG_CONTENT") || strings.Contains(r.stderr, "HARVESTER_") {
				t.Errorf("cloud-provider-config --help under %s:\n%s", name, r.stderr)
			}
		})
	}
}

// Under its own name the binary reads no second name's credential variable: cloud-provider-config falls back to
// $KUBECONFIG, as it always has without $HARVESTER_KUBECONFIG_CONTENT.
func TestOwnNameReadsNoSecondNamesVariable(t *testing.T) {
	servers, credentials := newCredentialListeners(t)
	env := credentials("HCIVM_KUBECONFIG_CONTENT")[:1] // the second name's variable only
	env = append(env, "KUBECONFIG="+filepath.Join(t.TempDir(), "absent"))
	r := runAs(t, identity.Canonical, env, "cloud-provider-config", "--namespace", "default", "--cluster-name", "gc1")
	if r.code != 1 || servers.own.reached() != "" {
		t.Errorf("cloud-provider-config as harvester read $HCIVM_KUBECONFIG_CONTENT: exit %d, reached %q\n%s", r.code, servers.own.reached(), r.stderr)
	}
}
