package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/doccheck"
)

// Every verb tells every problem of its command line at once, each naming its flag, as the flags' values are
// told (Go's flag package stops at the first): a value an int or bool flag cannot take, an unknown flag (its
// value skipped), a flag without its value, a stray argument, a required flag missing.
func TestVerbsTellEveryProblemOfTheCommandLine(t *testing.T) {
	env := func(k string) (string, bool) { return "x", k == "HARVESTER_DISK_SIZE" }
	for _, tt := range []struct {
		verb string
		env  func(string) (string, bool)
		args []string
		want string
	}{
		{"render", noEnv, []string{"--harvester-cpu-count", "two", "--harvester-enable-efi=maybe", "--frobnicate", "x", "stray", "--harvester-memory-size"},
			`render: 6 problems with the command line:
  --harvester-cpu-count: must be a whole number, got "two"
  --harvester-enable-efi: must be true or false, got "maybe"
  flag provided but not defined: -frobnicate
  unexpected argument "stray"
  flag needs an argument: -harvester-memory-size
  --machine-name is required: the name of the machine, which names its VM
usage: render --machine-name NAME [--harvester-... flags]
`},
		{"check", env, []string{"--count", "0", "--harvester-ssh-port=22x"},
			`check: 4 problems with the command line:
  --harvester-ssh-port: must be a whole number, got "22x"
  $HARVESTER_DISK_SIZE: must be a whole number, got "x"
  --machine-name is required: the name of the machine, which names its VM
  --count must be 1 to 1000: the number of machines in the pool, checked at once
usage: check --machine-name NAME [--machine-config FILE [--cluster FILE [--pool NAME]]] [--count N] [--harvester-... flags]
`},
		{"cloud-provider-config", noEnv, []string{"--output", "yaml", "--rke2", "--distribution", "k3s"},
			`cloud-provider-config: 4 problems with the command line:
  --namespace is required: the guest cluster's VM namespace in Harvester
  --cluster-name is required: the guest cluster's name, which names and labels its account
  --output must be kubeconfig or cloud-init, got "yaml"
  --rke2 is --distribution rke2 --drop-in, and --distribution is "k3s": give one of them
usage: docker-machine-driver-harvester cloud-provider-config --namespace NS --cluster-name NAME [flags] (-h lists them)
`},
		{"flags", noEnv, []string{"--json=maybe", "x"},
			`flags: 2 problems with the command line:
  --json: must be true or false, got "maybe"
  unexpected argument "x"
usage: flags [--json] [--driver NAME]
`},
	} {
		t.Run(tt.verb, func(t *testing.T) {
			stdout, stderr, code := runVerb(t, tt.env, tt.verb, tt.args...)
			if code != 2 || stdout != "" || stderr != tt.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", code, stdout, stderr, tt.want)
			}
		})
	}
}

// The messages of the verbs a newcomer meets first are quoted in docs/troubleshooting.md exactly as printed,
// values included: the doc check (internal/doccheck) compares a quote's words with the message's source, where a
// value such as the resource a hint names is a %s; here the line is the real one.
func TestVerbMessagesQuotedAsPrinted(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	unquoted := file("unquoted.yaml", "apiVersion: rke-machine-config.cattle.io/v1\nkind: HarvesterConfig\nmetadata: {name: nc-1, namespace: fleet-default}\ncpuCount: 4\n")
	list := file("list.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
	configMap := file("configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	md, err := doccheck.ReadFile("../..", "docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := map[string]bool{}
	for _, q := range doccheck.Quotes(md) {
		quoted[q.Text] = true
	}
	for _, args := range [][]string{
		{"chek"},
		{"create", "-d", "harvester", "node1"},
		{"render", "--machine-name", "m1", "--harvester-cpu-count", "two"},
		{"check", "--machine-name", "m1", "--count", "x"},
		{"check", "--machine-name", "m1", "--machine-config", unquoted},
		{"check", "--machine-name", "m1", "--machine-config", list},
		{"check", "--machine-name", "m1", "--machine-config", configMap},
		{"flags", "x"},
	} {
		_, stderr, code := runVerb(t, noEnv, args[0], args[1:]...)
		line, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !quoted[doccheck.Normalize(line)] {
			t.Errorf("%v: exit %d; docs/troubleshooting.md has no quote of its message as printed:\n  > `%s`", args, code, line)
		}
	}
}
