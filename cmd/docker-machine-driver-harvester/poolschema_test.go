package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// v106Fields are the fields of the driver Rancher 2.14 and 2.15 ship, v1.0.6 (harvester/flags.go
// GetCreateFlags at that tag): the copy of the schema a pool made before an upgrade keeps.
var v106Fields = []string{"kubeconfigContent", "clusterType", "clusterId", "clusterName", "vmNamespace", "cpuCount", "memorySize",
	"diskSize", "diskBus", "imageName", "diskInfo", "sshUser", "sshPort", "sshPassword", "keyPairName", "sshPrivateKeyPath",
	"networkType", "networkName", "networkModel", "networkInfo", "cloudConfig", "userData", "networkData", "vmAffinity",
	"enableEfi", "enableSecureBoot", "vgpuInfo", "cpuPinning", "isolateEmulatorThread", "enableTpm", "reservedMemorySize", "cpuModel"}

// schemaJSON is a DynamicSchemaSpec with these fields, as Rancher stores it in a pool (the types do not matter
// to pruneBySchema, only the names).
func schemaJSON(t *testing.T, fields []string) string {
	rf := map[string]any{}
	for _, f := range fields {
		rf[f] = map[string]any{"type": "string", "create": true, "update": true}
	}
	b, err := json.Marshal(map[string]any{"resourceFields": rf})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// clusterYAML is a provisioning cluster as `kubectl get clusters.provisioning.cattle.io -n fleet-default gc8 -o
// yaml` prints it (abridged; pkg/apis/provisioning.cattle.io/v1/cluster_types.go): pool1 uses poolYAML's config
// and keeps v1.0.6's schema, pool2 has no copy yet.
func clusterYAML(t *testing.T, kind string) string {
	return `apiVersion: provisioning.cattle.io/v1
kind: Cluster
metadata:
  name: gc8
  namespace: fleet-default
spec:
  cloudCredentialSecretName: cattle-global-data:cc-abcde
  kubernetesVersion: v1.32.5+rke2r1
  rkeConfig:
    machinePools:
    - name: pool1
      quantity: 3
      controlPlaneRole: true
      etcdRole: true
      workerRole: true
      machineConfigRef:
        kind: ` + kind + `
        name: nc-gc8-pool1-q99l7
      dynamicSchemaSpec: '` + schemaJSON(t, v106Fields) + `'
    - name: pool2
      quantity: 1
      machineConfigRef:
        kind: ` + kind + `
        name: nc-gc8-pool2-abcde
status:
  ready: true
`
}

func writeFiles(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// With the cluster, the fields pool1's copy of the schema lacks are dropped as Rancher drops them: machineType is
// set, so the machines would not get it (a problem); zone holds nothing (named, skipped). The cluster's name is
// the one Rancher adds for driver harvester, and the pool's quantity the count.
func TestCheckDropsWhatThePoolSchemaLacks(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pool.yaml": poolYAML, "cluster.yaml": clusterYAML(t, "HarvesterConfig")})
	in, err := parseCheckArgs([]string{"--machine-name", "m1", "--machine-config", filepath.Join(dir, "pool.yaml"),
		"--cluster", filepath.Join(dir, "cluster.yaml")}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if v := in.opts[config.FlagMachineType]; v != "" {
		t.Errorf("--harvester-machine-type reached the driver: %v", v)
	}
	if in.opts[config.FlagClusterName] != "gc8" || in.opts[config.FlagCPUCount] != 4 || in.opts[config.FlagEnableTPM] != true || in.count != 3 {
		t.Errorf("cluster name %v, cpu %v, tpm %v, count %d", in.opts[config.FlagClusterName], in.opts[config.FlagCPUCount], in.opts[config.FlagEnableTPM], in.count)
	}
	var out strings.Builder
	if code := printChecks(&out, []preflight.Check{*in.schema}); code != 1 {
		t.Errorf("a set field Rancher drops is a problem: exit %d", code)
	}
	want := "problem  pool schema           field machineType is set, but pool pool1's schema (dynamicSchemaSpec, copied when the pool was made) has no such field: " +
		"Rancher drops it and passes no --harvester-machine-type; let the pool adopt the driver's current schema (docs/options.md: Existing pools) or clear the field\n" +
		"skipped  pool schema           fields Rancher drops, not in pool pool1's schema, each holding nothing (\"\", false or null): zone\n"
	if out.String() != want {
		t.Errorf("lines\n%s\nwant\n%s", out.String(), want)
	}
	// The guide shows these lines as they are printed.
	guide, err := os.ReadFile("../../docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "```\n"+out.String()+"```\n") {
		t.Errorf("docs/check.md's \"What the pool's schema drops\" sample is not what check prints:\n%s", out.String())
	}

	// --count given wins over the quantity; a config every field of which is in the schema is ok.
	fine := strings.Replace(strings.Replace(poolYAML, "machineType: q35\n", "", 1), "zone: \"\"\n", "", 1)
	dir = writeFiles(t, map[string]string{"pool.yaml": fine, "cluster.yaml": clusterYAML(t, "HarvesterConfig")})
	in, err = parseCheckArgs([]string{"--machine-name", "m1", "--machine-config", filepath.Join(dir, "pool.yaml"),
		"--cluster", filepath.Join(dir, "cluster.yaml"), "--count", "2"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.schema.Lines(named); in.count != 2 || !reflect.DeepEqual(got, []string{"ok       pool schema           every field of the machine config is in pool pool1's schema"}) {
		t.Errorf("count %d, lines %q", in.count, got)
	}
}

// Under the second name the same pool gives --hcivm- flags, Rancher adds no cluster name, and the config's
// clusterName field is the flag.
func TestCheckPoolSchemaUnderTheSecondName(t *testing.T) {
	asDriver(t, "hcivm")
	config := strings.Replace(strings.Replace(poolYAML, "kind: HarvesterConfig", "kind: HcivmConfig", 1), `clusterName: ""`, "clusterName: gc8", 1)
	dir := writeFiles(t, map[string]string{"pool.yaml": config, "cluster.yaml": clusterYAML(t, "HcivmConfig")})
	data, _ := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	from, err := parsePoolSource(data, "")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := machineCommand([]byte(config), self, from)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cmd.args {
		if strings.Contains(a, "machine-type") || !strings.HasPrefix(a, "--hcivm-") {
			t.Errorf("argument %s", a)
		}
	}
	if !strings.Contains(strings.Join(cmd.args, " "), "--hcivm-cluster-name=gc8") || !strings.Contains(strings.Join(cmd.schema.Lines(named), "\n"), "passes no --hcivm-machine-type") {
		t.Errorf("args %q, lines %q", cmd.args, cmd.schema.Lines(named))
	}
}

// The pool's dynamicSchemaSpec alone (kubectl -o jsonpath) prunes the same; a pool without one yet drops nothing.
func TestCheckPoolSchemaAloneAndNotYetCopied(t *testing.T) {
	from, err := parsePoolSource([]byte(schemaJSON(t, v106Fields)), "")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := machineCommand([]byte(poolYAML), self, from)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cmd.schema.Lines(named), "\n"); !strings.Contains(got, "field machineType is set, but the pool's schema") || cmd.quantity != 0 {
		t.Errorf("lines %q, quantity %d", got, cmd.quantity)
	}
	if !reflect.DeepEqual(cmd.args[0], "--harvester-cluster-name=") {
		t.Errorf("without the cluster, the config's clusterName: %q", cmd.args)
	}
	pool2 := strings.Replace(poolYAML, "nc-gc8-pool1-q99l7", "nc-gc8-pool2-abcde", 1)
	from, err = parsePoolSource([]byte(clusterYAML(t, "HarvesterConfig")), "")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err = machineCommand([]byte(pool2), self, from)
	if err != nil {
		t.Fatal(err)
	}
	if got := cmd.schema.Lines(named); len(got) != 1 || !strings.HasPrefix(got[0], "skipped  pool schema           pool pool2 has no copy of the driver's schema yet") ||
		!strings.Contains(strings.Join(cmd.args, " "), "--harvester-machine-type=q35") || cmd.quantity != 1 {
		t.Errorf("lines %q, args %q, quantity %d", got, cmd.args, cmd.quantity)
	}
}

// What cannot work is refused with what to give instead, never quoting a value.
func TestCheckClusterRefuses(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pool.yaml": poolYAML, "cluster.yaml": clusterYAML(t, "HarvesterConfig"),
		"other.yaml":  strings.Replace(poolYAML, "nc-gc8-pool1-q99l7", "nc-gc8-pool9-zzzzz", 1),
		"big.yaml":    strings.Replace(clusterYAML(t, "HarvesterConfig"), "quantity: 3", "quantity: 5000", 1),
		"secret.yaml": "apiVersion: v1\nkind: Secret\ndata: {token: c2VjcmV0}\n", "noname.yaml": strings.Replace(poolYAML, "  name: nc-gc8-pool1-q99l7\n", "", 1),
		"badkey.yaml": "apiVersion: v1\n? [c2VjcmV0]\n: b\n",
		// sigs.k8s.io/yaml would read the first document alone and say nothing of the second.
		"twodocs.yaml": clusterYAML(t, "HarvesterConfig") + "---\n" + clusterYAML(t, "HarvesterConfig")})
	f := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster", f("cluster.yaml")}, "--cluster and --pool need --machine-config"},
		{[]string{"--machine-config", f("pool.yaml"), "--pool", "pool1"}, "--pool names a pool of --cluster: give --cluster too"},
		{[]string{"--machine-config", "-", "--cluster", "-"}, "cannot both read stdin"},
		{[]string{"--machine-config", f("other.yaml"), "--cluster", f("cluster.yaml")}, "--cluster: no pool of cluster gc8 uses HarvesterConfig nc-gc8-pool9-zzzzz; its pools: pool1 (HarvesterConfig nc-gc8-pool1-q99l7), pool2"},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("cluster.yaml"), "--pool", "pool2"}, "pool pool2 of cluster gc8 uses HarvesterConfig nc-gc8-pool2-abcde, not HarvesterConfig nc-gc8-pool1-q99l7"},
		{[]string{"--machine-config", f("noname.yaml"), "--cluster", f("cluster.yaml")}, "has no metadata.name"},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("big.yaml")}, "the pool's quantity is 5000, more than check takes at once (1000): give --count"},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("secret.yaml")}, `--cluster: the object must be apiVersion provisioning.cattle.io/v1, kind Cluster`},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("pool.yaml")}, `it is apiVersion "rke-machine-config.cattle.io/v1", kind "HarvesterConfig"`},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", dir}, "--cluster: cannot read the file"},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("badkey.yaml")}, "--cluster: not a YAML or JSON object: it does not parse"},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("cluster.yaml"), "--count", "x"}, `--count: must be a whole number, got "x"`},
		{[]string{"--machine-config", f("pool.yaml"), "--cluster", f("twodocs.yaml")}, "--cluster: holds more than one YAML document; only the first would be read: give one document"},
	} {
		_, err := parseCheckArgs(append([]string{"--machine-name", "m1"}, tc.args...), noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("a value reached the error: %v", err)
		}
	}
	if _, err := parsePoolSource([]byte(`{"resourceFields":{}}`), "pool1"); err == nil || !strings.Contains(err.Error(), "--cluster holds one pool's dynamicSchemaSpec") {
		t.Errorf("--pool with a schema alone: %v", err)
	}
	if _, err := parsePoolSource([]byte(`{"spec":{}}`), ""); err == nil || !strings.Contains(err.Error(), "neither a provisioning cluster") {
		t.Errorf("an object that is neither: %v", err)
	}
	if _, err := readObjectFile("--cluster", "a provisioning cluster", "-", &zeros{}); err == nil || !strings.Contains(err.Error(), "--cluster -: stdin holds more than 3 MiB, more than a provisioning cluster can be") {
		t.Errorf("endless stdin: %v", err)
	}
}

// The check verb prints the pool's line before the pre-flight's and fails on its problem: against an unreachable
// Harvester, that line and the credential's.
func TestCheckVerbPrintsThePoolSchemaFirst(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pool.yaml": poolYAML, "cluster.yaml": clusterYAML(t, "HarvesterConfig")})
	stdout, _, code := runVerb(t, unreachableHarvester, "check", "--machine-name", "m1", "--machine-config", filepath.Join(dir, "pool.yaml"),
		"--cluster", filepath.Join(dir, "cluster.yaml"))
	checks, _, _ := strings.Cut(stdout, "\n\n")
	lines := strings.Split(checks, "\n")
	if code != 1 || len(lines) != 3 || !strings.HasPrefix(lines[0], "problem  pool schema") || !strings.HasPrefix(lines[1], "skipped  pool schema") ||
		!strings.HasPrefix(lines[2], "problem  credential") {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
}
