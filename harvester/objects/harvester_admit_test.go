package objects

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// harvesterCluster is what the golden VMs' cluster holds for Harvester's validator: the networks they name.
var harvesterCluster = filepath.Join("testdata", "harvester-cluster.yaml")

// harvesterAdmit runs Harvester's own VirtualMachine validator (pkg/webhook/resources/virtualmachine, behind
// Harvester's admission handler, without a server) on the VirtualMachines of each file, created in file order in
// a cluster holding harvesterCluster and the file's other objects, and returns its verdicts.
func harvesterAdmit(t *testing.T, files ...string) []admitVerdict {
	t.Helper()
	return runAdmit(t, "harvester", append([]string{"-cluster", harvesterCluster}, files...)...)
}

// Every golden VirtualMachine under testdata also passes Harvester's own VirtualMachine validator, without warnings.
func TestGoldenVMsPassHarvesterValidator(t *testing.T) {
	withVMs, want := goldenVMs(t)
	allAllowed(t, "Harvester's validator", harvesterAdmit(t, withVMs...), want)
}

// Every golden VirtualMachine is mutated by Harvester's own VirtualMachine mutator (admit -mutate: as the API server
// runs it before the validators, its JSON patch applied as the API server applies it) and the result still passes
// Harvester's validator, without warnings. The requests it writes are those of the overcommit-config default
// (cpu 1000, memory 150): 2 cores and 4Gi give 200m and 2730Mi; with host devices the guest memory (4Gi, as
// additional-guest-memory-overhead-ratio is set and no memory is reserved); with dedicated CPUs the limits.
func TestGoldenVMsMutatedByHarvester(t *testing.T) {
	withVMs, want := goldenVMs(t)
	verdicts := runAdmit(t, "harvester", append([]string{"-mutate", "-cluster", harvesterCluster}, withVMs...)...)
	allAllowed(t, "Harvester's mutator and validator", verdicts, want)
	wantRequests := map[string]map[string]string{
		"minimal-legacy.yaml":                 {"cpu": "200m", "memory": "2730Mi"},
		"host-devices-labels-strategies.yaml": {"cpu": "200m", "memory": "4Gi"},
	}
	for _, v := range verdicts {
		if !v.Mutated || v.Requests["cpu"] == "" || v.Requests["memory"] == "" {
			t.Errorf("%s: VirtualMachine %s not given requests by Harvester's mutator: %+v", v.File, v.Name, v)
		}
		if w, ok := wantRequests[filepath.Base(v.File)]; ok && (v.Requests["cpu"] != w["cpu"] || v.Requests["memory"] != w["memory"]) {
			t.Errorf("%s: requests %v, want %v", v.File, v.Requests, w)
		}
		delete(wantRequests, filepath.Base(v.File))
	}
	if len(wantRequests) > 0 {
		t.Errorf("no verdict for %v", wantRequests)
	}
}

// The check above can fail: Harvester's validator refuses, with its own messages, what only it checks — a
// maintenance-mode strategy it does not know, a VM whose disks exceed the namespace's storage quota (Rancher's
// quota annotation and default ResourceQuota), and a MAC address another VM already has on the same cluster
// network — and lets the same VMs through where the rule is not broken.
func TestHarvesterValidatorRefuses(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "vm", "minimal-legacy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(doc []byte, old, new string) []byte {
		t.Helper()
		if !bytes.Contains(doc, []byte(old)) {
			t.Fatalf("minimal-legacy.yaml no longer contains %q", old)
		}
		return bytes.Replace(doc, []byte(old), []byte(new), 1)
	}
	quota := func(limit string) string {
		return `apiVersion: v1
kind: Namespace
metadata:
  name: default
  annotations:
    field.cattle.io/resourceQuota: '{"limit":{"requestsStorage":"` + limit + `"}}'
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: default-quota
  labels:
    resourcequota.management.cattle.io/default-resource-quota: "true"
spec:
  hard:
    requests.storage: ` + limit + `
---
`
	}
	nic := "          - bridge: {}\n            model: virtio\n            name: nic-0\n"
	withMAC := edit(golden, nic, "          - bridge: {}\n            macAddress: \"52:54:00:aa:bb:01\"\n            model: virtio\n            name: nic-0\n")
	named := func(doc []byte, name string) string { return strings.ReplaceAll(string(doc), "m1", name) }
	otherNetwork := `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: storage-net
  labels:
    network.harvesterhci.io/clusternetwork: storage
spec:
  config: '{}'
---
`

	type verdict struct{ name, refusal string } // refusal "": allowed
	cases := map[string]struct {
		doc  string
		want []verdict
	}{
		"maintenance-strategy.yaml": {
			string(edit(golden, "  labels:\n", "  labels:\n    harvesterhci.io/maintain-mode-strategy: Bogus\n")),
			[]verdict{{"m1", "invalid maintenance mode strategy: Bogus"}}},
		"maintenance-strategy-valid.yaml": {
			string(edit(golden, "  labels:\n", "  labels:\n    harvesterhci.io/maintain-mode-strategy: Shutdown\n")),
			[]verdict{{"m1", ""}}},
		"storage-quota.yaml": {quota("20Gi") + string(golden), // the disk asks for 40Gi
			[]verdict{{"m1", "storage insufficient resources due to resource quota"}}},
		"storage-quota-enough.yaml": {quota("50Gi") + string(golden), []verdict{{"m1", ""}}},
		"duplicate-mac.yaml": {
			named(withMAC, "vm-a") + "---\n" + named(withMAC, "vm-b") + "---\n" + otherNetwork +
				strings.ReplaceAll(named(withMAC, "vm-c"), "default/vlan1", "default/storage-net"),
			[]verdict{{"vm-a", ""}, {"vm-b", "duplicate mac address present for vm vm-b for cluster network mgmt"}, {"vm-c", ""}}},
	}
	dir := t.TempDir()
	var files []string
	for name, c := range cases {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	got := map[string][]verdict{}
	for _, v := range harvesterAdmit(t, files...) {
		refusal := v.Message
		if v.Allowed {
			refusal = ""
		} else if refusal == "" {
			refusal = "(refused without a message)"
		}
		got[filepath.Base(v.File)] = append(got[filepath.Base(v.File)], verdict{v.Name, refusal})
	}
	for name, c := range cases {
		if g := got[name]; !slices.Equal(g, c.want) {
			t.Errorf("%s: verdicts %+v, want %+v", name, g, c.want)
		}
	}
}
