package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// pool.yaml as `kubectl get harvesterconfig -n fleet-default NAME -o yaml` prints it (metadata abridged).
const poolYAML = `apiVersion: rke-machine-config.cattle.io/v1
kind: HarvesterConfig
metadata:
  annotations:
    field.cattle.io/creatorId: user-x
  name: nc-gc8-pool1-q99l7
  namespace: fleet-default
  managedFields:
  - manager: rancher
    operation: Update
cpuCount: "4"
memorySize: "8"
diskSize: "40"
imageName: default/img
networkName: default/net
vmNamespace: team
enableTpm: true
enableEfi: false
zone: ""
clusterName: ""
userData: null
machineType: q35
`

// asDriver makes self the driver name for the test, as if the binary were docker-machine-driver-<name>.
func asDriver(t *testing.T, name string) {
	saved := self
	id, err := harvester.IdentityFromExecutable("/opt/bin/docker-machine-driver-" + name)
	if err != nil {
		t.Fatal(err)
	}
	self = id
	t.Cleanup(func() { self = saved })
}

// machineConfigArgs is the command line machineCommand makes of a machine config, without --cluster.
func machineConfigArgs(data []byte, id identity.Identity) ([]string, error) {
	cmd, err := machineCommand(data, id, nil)
	return cmd.args, err
}

// The fields become the flags Rancher passes (toArgs): non-empty strings with their value, true booleans bare;
// empty strings, false and null give nothing; metadata is no field.
func TestMachineConfigArgs(t *testing.T) {
	got, err := machineConfigArgs([]byte(poolYAML), self)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--harvester-cluster-name=", "--harvester-cpu-count=4", "--harvester-disk-size=40", "--harvester-enable-tpm",
		"--harvester-image-name=default/img", "--harvester-machine-type=q35", "--harvester-memory-size=8",
		"--harvester-network-name=default/net", "--harvester-vm-namespace=team"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
	// JSON (kubectl -o json) is read the same way.
	if j, err := machineConfigArgs([]byte(`{"apiVersion":"rke-machine-config.cattle.io/v1","kind":"HarvesterConfig","cpuCount":"4"}`), self); err != nil ||
		!reflect.DeepEqual(j, []string{"--harvester-cluster-name=", "--harvester-cpu-count=4"}) {
		t.Errorf("JSON: %q, %v", j, err)
	}
	// Under the second name the same fields, of kind HcivmConfig, become its flags; Rancher adds no cluster name.
	asDriver(t, "hcivm")
	hcivm := strings.Replace(poolYAML, "kind: HarvesterConfig", "kind: HcivmConfig", 1)
	got, err = machineConfigArgs([]byte(hcivm), self)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want)-1 || got[0] != "--hcivm-cpu-count=4" || !strings.HasPrefix(got[len(got)-1], "--hcivm-vm-namespace=team") {
		t.Errorf("as hcivm: %q", got)
	}
}

// Every problem is told at once, naming the field and never its value.
func TestMachineConfigProblems(t *testing.T) {
	bad := poolYAML + "sshPasword: hunter2-secret\ncpuCount: 4\n"
	bad = strings.Replace(bad, "cpuCount: \"4\"\n", "", 1)
	bad = strings.Replace(bad, "enableTpm: true", `enableTpm: "true"`, 1)
	bad = strings.Replace(bad, `diskSize: "40"`, `diskSize: "forty-secret"`, 1)
	_, err := machineConfigArgs([]byte(bad), self)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{`field "sshPasword" is not a field of HarvesterConfig`,
		"field cpuCount (--harvester-cpu-count) must be a string: quote the value",
		"field enableTpm (--harvester-enable-tpm) must be true or false",
		"field diskSize (--harvester-disk-size) must be a whole number in quotes"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no %q in %v", w, err)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("a value reached the error: %v", err)
	}
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: v1\nkind: List\nitems: []\n", "the file holds a list"},
		{"apiVersion: v1\nkind: ConfigMap\ndata: {}\n", `it is apiVersion "v1", kind "ConfigMap"`},
		{"apiVersion: rke-machine-config.cattle.io/v1\nkind: Amazonec2Config\n", "must be apiVersion rke-machine-config.cattle.io/v1, kind HarvesterConfig"},
		{"apiVersion: rke-machine-config.cattle.io/v1\nkind: harvesterConfig\n", "kind HarvesterConfig"},
		{"- a\n- b\n", "not a YAML or JSON object"},
		{"cpuCount: \"1\"\ncpuCount: \"2\"\n", "field cpuCount is given twice"},
		{poolYAML + "sshPassword: a\nsshPassword: b\n", "field sshPassword is given twice"},
		{poolYAML + "metadata: {}\n", "field metadata is given twice"},
		{poolYAML + "---\nsshPassword: b\n", "holds more than one YAML document"},
	} {
		if _, err := machineConfigArgs([]byte(tc.doc), self); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// A key that is no field's name is not echoed (a secret pasted by mistake would be): only one a typo away from a
// field, told with the field meant. Nor is what the YAML parser quotes of a key it cannot read, or a key given
// twice that is no field.
func TestMachineConfigKeysAreNotEchoed(t *testing.T) {
	for _, tc := range []struct{ doc, want, hidden string }{
		{poolYAML + "hunter2x: a\n", "a field that is not a field of HarvesterConfig (its name is not shown", "hunter2x"},
		{poolYAML + "hunter2x: a\nPLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj: b\n", "2 fields that are not fields of HarvesterConfig (their names are not shown",
			"PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj"},
		{poolYAML + "sshPasword: hunter2x\n", `field "sshPasword" is not a field of HarvesterConfig: did you mean sshPassword?`, "hunter2x"},
		{poolYAML + "hunter2x: a\nhunter2x: b\n", "field (a key not shown) is given twice", "hunter2x"},
		// A flag's name, or its variable, is no secret: it is named with the field it means.
		{poolYAML + "harvester-cpu-count: \"64\"\n", `field harvester-cpu-count is the name of flag --harvester-cpu-count, not a field of HarvesterConfig: its field is cpuCount`, "64"},
		{poolYAML + "--harvester-ssh-password: hunter2x\n", `field --harvester-ssh-password is the name of flag --harvester-ssh-password, not a field of HarvesterConfig: its field is sshPassword`, "hunter2x"},
		{poolYAML + "HARVESTER_DISK_SIZE: \"9\"\n", `field HARVESTER_DISK_SIZE is the name of flag --harvester-disk-size, not a field of HarvesterConfig: its field is diskSize`, "not shown"},
		{poolYAML + "? [hunter2x]\n: b\n", "not a YAML or JSON object", "hunter2x"},
		{strings.Replace(poolYAML, "kind: HarvesterConfig", "kind: PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj", 1), "must be apiVersion",
			"PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj"},
	} {
		_, err := machineConfigFlags(writeTemp(t, tc.doc), "", "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.hidden) {
			t.Errorf("want %q and no %q, got %v", tc.want, tc.hidden, err)
		}
	}
}

// Under the second name, its flag's name and the canonical one are both named with their field.
func TestMachineConfigFlagNameAsFieldUnderSecondName(t *testing.T) {
	asDriver(t, "hcivm")
	hcivm := strings.Replace(poolYAML, "kind: HarvesterConfig", "kind: HcivmConfig", 1)
	for key, want := range map[string]string{
		"hcivm-cpu-count":     "field hcivm-cpu-count is the name of flag --hcivm-cpu-count, not a field of HcivmConfig: its field is cpuCount",
		"harvester-cpu-count": "field harvester-cpu-count is the name of flag --hcivm-cpu-count, not a field of HcivmConfig: its field is cpuCount",
		"HCIVM_CPU_COUNT":     "field HCIVM_CPU_COUNT is the name of flag --hcivm-cpu-count, not a field of HcivmConfig: its field is cpuCount",
	} {
		if _, err := machineConfigArgs([]byte(hcivm+key+": \"64\"\n"), self); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", key, err, want)
		}
	}
}

// writeTemp writes content to a new file of the test and returns its path.
func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The file is read only if it is a regular file of at most 3 MiB, or that much of stdin: nothing blocks or grows.
func TestReadMachineConfigIsBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, maxMachineConfigSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo, socket := hostile.SpecialFiles(t)
	start := time.Now()
	for path, want := range map[string]string{big: "over", fifo: "FIFO", socket: "socket", dir: "directory", "/dev/zero": "device",
		filepath.Join(dir, "none"): "no such file"} {
		if _, err := readMachineConfig(path, nil); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--machine-config") {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("refusing special files took %v", time.Since(start))
	}
	endless := &zeros{}
	if _, err := readMachineConfig("-", endless); err == nil || !strings.Contains(err.Error(), "stdin holds more than 3 MiB") || endless.n > maxMachineConfigSize+64<<10 {
		t.Errorf("endless stdin: %v after %d bytes", err, endless.n)
	}
	if data, err := readMachineConfig("-", strings.NewReader(poolYAML)); err != nil || string(data) != poolYAML {
		t.Errorf("stdin: %v", err)
	}
}

type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) { z.n += len(p); return len(p), nil }

// A flag given wins over the file's field, and the file's field over the flag's environment variable.
func TestCheckArgsPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pool.yaml")
	if err := os.WriteFile(path, []byte(poolYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"HARVESTER_CPU_COUNT": "16", "HARVESTER_SSH_USER": "env-user", "HARVESTER_KUBECONFIG_CONTENT": "k"}[k]
		return v, ok
	}
	in, err := parseCheckArgs([]string{"--machine-name", "m1", "--machine-config", path, "--harvester-memory-size", "2",
		"--harvester-enable-tpm=false", "--count", "3"}, env)
	if err != nil {
		t.Fatal(err)
	}
	o := in.opts
	for flag, want := range map[string]any{config.FlagCPUCount: 4, config.FlagMemorySize: 2, config.FlagEnableTPM: false,
		config.FlagSSHUser: "env-user", config.FlagImageName: "default/img", config.FlagKubeconfigContent: "k", config.FlagVMNamespace: "team"} {
		if got := o[flag]; got != want {
			t.Errorf("%s = %v, want %v", flag, got, want)
		}
	}
	if in.count != 3 || in.machineName != "m1" {
		t.Errorf("count %d, machine %q", in.count, in.machineName)
	}
	for _, args := range [][]string{{"--count", "0"}, {"--count", "1001"}} {
		if _, err := parseCheckArgs(append([]string{"--machine-name", "m1"}, args...), nil); err == nil || !strings.Contains(err.Error(), "--count must be 1 to 1000") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if _, err := parseCheckArgs([]string{"--machine-name", "m1", "--machine-config", path + ".missing"}, nil); err == nil ||
		!strings.Contains(err.Error(), "--machine-config: cannot read the file") {
		t.Errorf("a missing file: %v", err)
	}
}
