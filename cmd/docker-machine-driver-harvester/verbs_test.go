package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// noEnv is an environment without any HARVESTER_* variable.
func noEnv(string) (string, bool) { return "", false }

// runVerb runs a subcommand in process, as main does.
func runVerb(t *testing.T, env func(string) (string, bool), verb string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut strings.Builder
	code = run(verb, args, env, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestRenderVerb(t *testing.T) {
	stdout, stderr, code := runVerb(t, noEnv, "render", "--machine-name", "m1", "--harvester-image-name", "img",
		"--harvester-disk-size", "10", "--harvester-network-name", "net")
	// stdout is the objects alone; stderr what an autoscaling pool of them needs (TestRenderVerbPrintsTheAutoscalingAnnotations).
	if code != 0 || !strings.Contains(stdout, "kind: Secret") || !strings.Contains(stdout, "kind: VirtualMachine") || strings.Contains(stdout, "capacity.") ||
		!strings.HasPrefix(stderr, "render: a pool of this node template that autoscales from zero machines needs these machineDeploymentAnnotations") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Flags come from the environment too, as rancher-machine reads them.
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"HARVESTER_IMAGE_NAME": "img", "HARVESTER_DISK_SIZE": "10", "HARVESTER_NETWORK_NAME": "net"}[k]
		return v, ok
	}
	if stdout, stderr, code := runVerb(t, env, "render", "--machine-name", "m1"); code != 0 || !strings.Contains(stdout, "default/img") {
		t.Fatalf("from the environment: exit %d, stderr %q", code, stderr)
	}
}

// render reads no cluster, so it cannot tell whether an admin allowed the objects a VM patch gives the guest: it
// prints the VM, and on stderr what a create will require of each.
func TestRenderVerbNamesWhatAVMPatchRequires(t *testing.T) {
	patch := `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"ca","configMap":{"name":"team-ca"}}}]`
	stdout, stderr, code := runVerb(t, noEnv, "render", "--machine-name", "m1", "--harvester-image-name", "img",
		"--harvester-disk-size", "10", "--harvester-network-name", "net", "--harvester-vm-namespace", "team", "--harvester-vm-patch", patch)
	want := "render: the VM patch gives the guest ConfigMap team-ca (spec.template.spec.volumes[ca].configMap): a create refuses it unless an admin who may " +
		"write it in Harvester allows it (never one a node driver made) with: kubectl -n team label configmap team-ca node-driver.harvesterhci.io/vm-patch-allowed=true\n"
	if code != 0 || !strings.Contains(stdout, "name: team-ca") || !strings.HasSuffix(stderr, "\n"+want) {
		t.Fatalf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
}

func TestRenderVerbExitCodes(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no machine name", []string{"--harvester-image-name", "img"}, 2, []string{"render: --machine-name is required"}},
		{"unknown flag", []string{"--machine-name", "m1", "--harvester-frobnicate", "x"}, 2, []string{"render: flag provided but not defined", "usage: render"}},
		{"stray argument", []string{"--machine-name", "m1", "extra"}, 2, []string{`unexpected argument "extra"`}},
		{"cloud-init problems, each under its flag", []string{"--machine-name", "m1", "--harvester-image-name", "img", "--harvester-disk-size", "1",
			"--harvester-network-name", "net", "--harvester-ssh-password", "line\nbreak",
			"--harvester-network-data", "network: {version: 1, config: [{type: physical}]}",
			"--harvester-cloud-config", "/nonexistent/user-data"}, 1,
			[]string{"--harvester-ssh-password:", "--harvester-network-data:", "--harvester-cloud-config:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runVerb(t, noEnv, "render", tt.args...)
			if code != tt.code || stdout != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, tt.code, stdout, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func TestCloudProviderConfigVerbExitCodes(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // never the machine's own kubeconfig
	badCredential := func(k string) (string, bool) {
		if k == "HARVESTER_KUBECONFIG_CONTENT" {
			return "not a kubeconfig", true
		}
		return "", false
	}
	kubeconfig := filepath.Join(t.TempDir(), "harvester.yaml")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		env  func(string) (string, bool)
		args []string
		code int
		want string
	}{
		{"no namespace", noEnv, []string{"--cluster-name", "gc1"}, 2, "usage: docker-machine-driver-harvester cloud-provider-config"},
		{"no account name", noEnv, []string{"--namespace", "default"}, 2, "usage:"},
		{"account name only", noEnv, []string{"--namespace", "default", "--service-account", "gc1"}, 2, "usage:"},
		{"the default account", noEnv, []string{"--namespace", "ns1", "--cluster-name", "gc1", "--service-account", "default"}, 2,
			`cloud-provider-config: --service-account "default" is refused: it is the namespace's own ServiceAccount`},
		{"a cluster named default", noEnv, []string{"--namespace", "ns1", "--cluster-name", "default"}, 2,
			`cloud-provider-config: --cluster-name "default" is refused`},
		{"a cluster name that cannot name an account", noEnv, []string{"--namespace", "ns1", "--cluster-name", "GC_1"}, 2,
			`cloud-provider-config: --cluster-name "GC_1" cannot name the guest cluster's ServiceAccount GC_1-cloud-provider`},
		{"unknown output", noEnv, []string{"--namespace", "default", "--cluster-name", "gc1", "--output", "yaml"}, 2, "usage:"},
		{"unknown flag", noEnv, []string{"--frobnicate"}, 2, "flag provided but not defined"},
		{"unknown distribution", noEnv, []string{"--namespace", "default", "--cluster-name", "gc1", "--output", "cloud-init", "--distribution", "k0s"}, 2,
			`cloud-provider-config: --distribution must be k3s or rke2, got "k0s"`},
		{"RKE2's drop-in on K3s", noEnv, []string{"--namespace", "default", "--cluster-name", "gc1", "--output", "cloud-init", "--distribution", "k3s", "--rke2"}, 2, "usage:"},
		{"credential from the environment is not a kubeconfig", badCredential, []string{"--namespace", "default", "--cluster-name", "gc1"}, 1,
			"cloud-provider-config: $HARVESTER_KUBECONFIG_CONTENT: is not"},
		{"missing kubeconfig file", noEnv, []string{"--kubeconfig", "/nonexistent/kubeconfig", "--namespace", "default", "--cluster-name", "gc1"}, 1,
			"cloud-provider-config: cannot read the kubeconfig from /nonexistent/kubeconfig: stat /nonexistent/kubeconfig: no such file or directory"},
		{"Harvester unreachable", noEnv, []string{"--kubeconfig", kubeconfig, "--namespace", "default", "--cluster-name", "gc1"}, 1,
			"cloud-provider-config: cannot read namespace default: Harvester at 127.0.0.1:1 is unreachable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runVerb(t, tt.env, "cloud-provider-config", tt.args...)
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, tt.code, stdout, stderr, tt.want)
			}
		})
	}
}

// unreachableHarvester is an environment whose credential names a Harvester nobody serves.
func unreachableHarvester(k string) (string, bool) {
	unreachable := "apiVersion: v1\nkind: Config\nclusters:\n- name: h\n  cluster:\n    server: http://127.0.0.1:1\n" +
		"contexts:\n- name: h\n  context:\n    cluster: h\n    user: u\nusers:\n- name: u\n  user: {}\ncurrent-context: h\n"
	v, ok := map[string]string{"HARVESTER_KUBECONFIG_CONTENT": unreachable}[k]
	return v, ok
}

func TestCheckVerbExitCodes(t *testing.T) {
	env := unreachableHarvester
	if _, stderr, code := runVerb(t, env, "check", "--harvester-disk-size", "10"); code != 2 || !strings.Contains(stderr, "--machine-name is required") {
		t.Errorf("without a machine name: exit %d, stderr %q", code, stderr)
	}
	if _, _, code := runVerb(t, env, "check", "--machine-name", "m1", "--harvester-cpu-count"); code != 2 {
		t.Errorf("a malformed command line: exit %d", code)
	}
	if _, stderr, code := runVerb(t, env, "check", "--machine-name", "m1", "--harvester-disk-size", "-1"); code != 1 || !strings.Contains(stderr, "--harvester-disk-size") {
		t.Errorf("an invalid flag: exit %d, stderr %q", code, stderr)
	}
	stdout, _, code := runVerb(t, env, "check", "--machine-name", "m1", "--harvester-image-name", "img", "--harvester-disk-size", "10", "--harvester-network-name", "net")
	// The checks end at the blank line before the autoscaling annotations, which need no cluster.
	checks, annotations, _ := strings.Cut(stdout, "\n\n")
	if code != 1 || !strings.HasPrefix(checks, "problem  credential") || strings.Contains(checks, "\n") || !strings.Contains(annotations, "machineDeploymentAnnotations:") {
		t.Errorf("an unreachable Harvester: exit %d, stdout %q", code, stdout)
	}
}

// A check that could not look at everything is "skipped" with why, never "ok", and fails nothing; a problem
// found beside it still does.
func TestPrintChecksSkippedIsNotOK(t *testing.T) {
	var out strings.Builder
	code := printChecks(&out, []preflight.Check{
		{Name: preflight.CheckCredential, Detail: "accepted by Harvester"},
		{Name: preflight.CheckStorageClasses, Skipped: "the credential may not get storageclasses: cannot tell whether storage class sc1 exists"},
	})
	want := "ok       credential            accepted by Harvester\n" +
		"skipped  storage classes       the credential may not get storageclasses: cannot tell whether storage class sc1 exists\n"
	if code != 0 || out.String() != want {
		t.Errorf("exit %d, output:\n%s\nwant exit 0 and:\n%s", code, out.String(), want)
	}
	out.Reset()
	code = printChecks(&out, []preflight.Check{{Name: preflight.CheckNetworks, Skipped: "cannot tell whether network a/b exists",
		Problems: []config.Problem{{Flag: config.FlagNetworkInfo, Message: "nic-1: network a/c does not exist"}}}})
	if code != 1 || strings.Contains(out.String(), "ok ") || !strings.Contains(out.String(), "problem  networks") || !strings.Contains(out.String(), "skipped  networks") {
		t.Errorf("a problem beside a skipped part: exit %d, output:\n%s", code, out.String())
	}
}
