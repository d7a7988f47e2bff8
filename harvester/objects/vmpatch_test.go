package objects

import (
	"encoding/json"
	"strings"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// Patches of the golden VMs (vmCases): fields no flag covers, and a field a flag sets, overridden.
const (
	// A merge patch: an annotation of the user's, and domain and template fields of KubeVirt's.
	vmPatchMerge = `{"metadata":{"annotations":{"example.com/owner":"team-ml"}},"spec":{"template":{"spec":{"terminationGracePeriodSeconds":60,` +
		`"domain":{"features":{"acpi":{}},"clock":{"utc":{}},"ioThreadsPolicy":"shared"}}}}}`
	// A JSON patch: a test, a replaced eviction strategy, a scratch disk on an empty disk (no claim), a template
	// label, a removed annotation of Harvester's that the driver does not own.
	vmPatchJSON = `[{"op":"test","path":"/spec/template/spec/evictionStrategy","value":"LiveMigrateIfPossible"},` +
		`{"op":"replace","path":"/spec/template/spec/evictionStrategy","value":"LiveMigrate"},` +
		`{"op":"add","path":"/spec/template/spec/domain/devices/disks/-","value":{"name":"scratch","disk":{"bus":"virtio"}}},` +
		`{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"scratch","emptyDisk":{"capacity":"2Gi"}}},` +
		`{"op":"add","path":"/spec/template/metadata/labels/example.com~1tier","value":"gold"}]`
)

// patchedVM builds machine m1's VM with extra flags, --harvester-vm-patch among them, as a create builds it.
func patchedVM(t *testing.T, kv ...any) (*kubevirtv1.VirtualMachine, error) {
	t.Helper()
	cfg, err := config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), kv...))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return vmFor(cfg)
}

// The patch lands on the VM, on top of what the flags made, and nothing else changes.
func TestVMPatchApplies(t *testing.T) {
	plain, err := patchedVM(t)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := patchedVM(t, config.FlagVMPatch, vmPatchMerge)
	if err != nil {
		t.Fatal(err)
	}
	spec := merged.Spec.Template.Spec
	if merged.Annotations["example.com/owner"] != "team-ml" || spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds != 60 ||
		spec.Domain.Features == nil || spec.Domain.Features.ACPI.Enabled != nil || spec.Domain.Clock == nil || spec.Domain.Clock.UTC == nil ||
		spec.Domain.IOThreadsPolicy == nil || *spec.Domain.IOThreadsPolicy != kubevirtv1.IOThreadsPolicyShared {
		t.Errorf("merge patch not applied: annotations %v, template spec %+v", merged.Annotations, spec)
	}
	// Undo the patch's fields: the rest is the VM without a patch.
	undo := merged.DeepCopy()
	delete(undo.Annotations, "example.com/owner")
	undo.Spec.Template.Spec.TerminationGracePeriodSeconds = nil
	undo.Spec.Template.Spec.Domain.Features, undo.Spec.Template.Spec.Domain.Clock, undo.Spec.Template.Spec.Domain.IOThreadsPolicy = nil, nil, nil
	if a, b := mustJSON(t, undo), mustJSON(t, plain); a != b {
		t.Errorf("the merge patch changed more than its fields:\n%s\nwant\n%s", a, b)
	}

	patched, err := patchedVM(t, config.FlagVMPatch, vmPatchJSON)
	if err != nil {
		t.Fatal(err)
	}
	spec = patched.Spec.Template.Spec
	disks, vols := spec.Domain.Devices.Disks, spec.Volumes
	if *spec.EvictionStrategy != kubevirtv1.EvictionStrategyLiveMigrate || disks[len(disks)-1].Name != "scratch" || vols[len(vols)-1].EmptyDisk == nil ||
		patched.Spec.Template.ObjectMeta.Labels["example.com/tier"] != "gold" {
		t.Errorf("JSON patch not applied: %+v", spec)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A patch is refused, naming the flag and what it changed of the driver's own parts, however it gets there:
// naming a field, nulling its parent, replacing a whole object.
func TestVMPatchRefusesTheDriversParts(t *testing.T) {
	ipPool := []any{config.FlagIPPool, "10.0.0.10-10.0.0.59/24"}
	tests := []struct {
		name, patch string
		extra       []any
		want        []string
	}{
		{name: "the name", patch: `{"metadata":{"name":"other"}}`, want: []string{"metadata.name"}},
		{name: "the namespace, by JSON patch", patch: `[{"op":"replace","path":"/metadata/namespace","value":"kube-system"}]`, want: []string{"metadata.namespace"}},
		{name: "all labels, nulled", patch: `{"metadata":{"labels":null}}`,
			want: []string{"metadata.labels[harvesterhci.io/creator]", "metadata.labels[harvesterhci.io/vmName]", "metadata.labels[harvesterhci.io/machineSetName]"}},
		{name: "the whole metadata replaced", patch: `[{"op":"replace","path":"/metadata","value":{"name":"m1","namespace":"default"}}]`,
			want: []string{"metadata.labels[harvesterhci.io/creator]", "metadata.annotations[harvesterhci.io/volumeClaimTemplates]"}},
		{name: "the whole VM replaced", patch: `[{"op":"replace","path":"","value":{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"m1","namespace":"default"}}}]`,
			want: []string{"metadata.labels[harvesterhci.io/creator]", "spec.template.spec.volumes[cloudinitdisk]", "spec.runStrategy"}},
		{name: "the creator label", patch: `[{"op":"remove","path":"/metadata/labels/harvesterhci.io~1creator"}]`, want: []string{"metadata.labels[harvesterhci.io/creator]"}},
		{name: "the template's vmName label", patch: `{"spec":{"template":{"metadata":{"labels":{"harvesterhci.io/vmName":"other"}}}}}`,
			want: []string{"spec.template.metadata.labels[harvesterhci.io/vmName]"}},
		{name: "a guest-cluster label added", patch: `{"metadata":{"labels":{"guestcluster.harvesterhci.io/name":"prod"}}}`,
			want: []string{"metadata.labels[guestcluster.harvesterhci.io/name]"}},
		{name: "the claims annotation", patch: `{"metadata":{"annotations":{"harvesterhci.io/volumeClaimTemplates":"[]"}}}`,
			want: []string{"metadata.annotations[harvesterhci.io/volumeClaimTemplates]"}},
		{name: "remove-all-claims set", patch: `{"metadata":{"annotations":{"harvesterhci.io/removeAllPersistentVolumeClaims":"true"}}}`,
			want: []string{"metadata.annotations[harvesterhci.io/removeAllPersistentVolumeClaims]"}},
		{name: "an annotation of the driver's prefix", patch: `{"metadata":{"annotations":{"node-driver.harvesterhci.io/create-id":"x"}}}`,
			want: []string{"metadata.annotations[node-driver.harvesterhci.io/create-id]"}},
		{name: "the template's key pairs", patch: `{"spec":{"template":{"metadata":{"annotations":{"harvesterhci.io/sshNames":"[\"default/x\"]"}}}}}`,
			want: []string{"spec.template.metadata.annotations[harvesterhci.io/sshNames]"}},
		{name: "finalizers", patch: `{"metadata":{"finalizers":["example.com/hold"]}}`, want: []string{"metadata.finalizers"}},
		{name: "an owner", patch: `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u"}]}}`, want: []string{"metadata.ownerReferences"}},
		{name: "the kind", patch: `[{"op":"replace","path":"/kind","value":"VirtualMachineInstance"}]`, want: []string{"kind"}},
		{name: "the cloud-init volume's Secret", patch: `[{"op":"replace","path":"/spec/template/spec/volumes/1/cloudInitNoCloud/secretRef/name","value":"other"}]`,
			want: []string{"spec.template.spec.volumes[cloudinitdisk]"}},
		{name: "the cloud-init volume removed", patch: `[{"op":"remove","path":"/spec/template/spec/volumes/1"}]`, want: []string{"spec.template.spec.volumes[cloudinitdisk]"}},
		{name: "the cloud-init disk removed", patch: `[{"op":"remove","path":"/spec/template/spec/domain/devices/disks/1"}]`,
			want: []string{"spec.template.spec.domain.devices.disks[cloudinitdisk]"}},
		{name: "a second cloud-init source", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"more","cloudInitNoCloud":{"userData":"#cloud-config\n"}}}]`,
			want: []string{"spec.template.spec.volumes[more]"}},
		{name: "the cloud-init Secret mounted", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","secret":{"secretName":"m1-cloudinit"}}}]`,
			want: []string{"spec.template.spec.volumes[peek]"}},
		{name: "the cloud-init Secret as a sysprep volume", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","sysprep":{"secret":{"name":"m1-cloudinit"}}}}]`,
			want: []string{"spec.template.spec.volumes[peek]"}},
		{name: "a sysprep ConfigMap of its name", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","sysprep":{"configMap":{"name":"m1-cloudinit"}}}}]`,
			want: []string{"spec.template.spec.volumes[peek]"}},
		{name: "a configMap volume of its name", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","configMap":{"name":"m1-cloudinit"}}}]`,
			want: []string{"spec.template.spec.volumes[peek]"}},
		{name: "its name as a containerDisk's pull Secret", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","containerDisk":{"image":"x","imagePullSecret":"m1-cloudinit"}}}]`,
			want: []string{"spec.template.spec.volumes[peek]"}},
		{name: "the cloud-init Secret as an access credential", patch: `{"spec":{"template":{"spec":{"accessCredentials":[{"sshPublicKey":{"source":{"secret":{"secretName":"m1-cloudinit"}},"propagationMethod":{"noCloud":{}}}}]}}}}`,
			want: []string{"spec.template.spec.accessCredentials[0].sshPublicKey.source.secret"}},
		{name: "the cloud-init Secret as a kernel boot's pull Secret", patch: `{"spec":{"template":{"spec":{"domain":{"firmware":{"kernelBoot":{"container":{"image":"x","imagePullSecret":"m1-cloudinit"}}}}}}}}`,
			want: []string{"spec.template.spec.domain.firmware.kernelBoot.container.imagePullSecret"}},
		{name: "a claim the driver did not make", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"data","persistentVolumeClaim":{"claimName":"precious","hotpluggable":true}}}]`,
			want: []string{"spec.template.spec.volumes[data]"}},
		{name: "a disk's claim swapped", patch: `[{"op":"replace","path":"/spec/template/spec/volumes/0/persistentVolumeClaim/claimName","value":"precious"}]`,
			want: []string{"spec.template.spec.volumes[disk-0]"}},
		{name: "a data volume template", patch: `{"spec":{"dataVolumeTemplates":[{"metadata":{"name":"dv"},"spec":{}}]}}`, want: []string{"spec.dataVolumeTemplates"}},
		{name: "the run strategy", patch: `{"spec":{"runStrategy":"Always"}}`, want: []string{"spec.runStrategy"}},
		{name: "running", patch: `{"spec":{"running":true}}`, want: []string{"spec.running"}},
		{name: "the status", patch: `{"status":{"ready":true}}`, want: []string{"status"}},
		{name: "the static address's MAC", patch: `[{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":"52:54:00:00:00:09"}]`,
			extra: ipPool, want: []string{"spec.template.spec.domain.devices.interfaces[nic-0].macAddress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := patchedVM(t, append([]any{config.FlagVMPatch, tt.patch}, tt.extra...)...)
			if err == nil {
				t.Fatal("the patch was applied")
			}
			configtest.WantAll(t, err.Error(), append([]string{"--harvester-vm-patch: changes what the driver owns: "}, tt.want...)...)
		})
	}
	// A MAC the driver does not give is the user's.
	if _, err := patchedVM(t, config.FlagVMPatch, `[{"op":"add","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":"52:54:00:00:00:09"}]`); err != nil {
		t.Errorf("a MAC without a pool: %v", err)
	}
}

// A patch that does not apply, or leaves something that is not a KubeVirt VirtualMachine, is refused with why.
func TestVMPatchRefusesWhatDoesNotApply(t *testing.T) {
	tests := []struct{ name, patch, want string }{
		{"a failed test", `[{"op":"test","path":"/spec/template/spec/evictionStrategy","value":"None"}]`,
			`JSON patch operation 0 (test "/spec/template/spec/evictionStrategy") does not apply to the VM the driver builds: the VM holds another value there`},
		{"a missing path", `[{"op":"add","path":"/spec/template/spec/nothing/here","value":1}]`,
			`operation 0 (add "/spec/template/spec/nothing/here") does not apply to the VM the driver builds: the VM has nothing there`},
		{"removing what is not there", `[{"op":"test","path":"/kind","value":"VirtualMachine"},{"op":"remove","path":"/spec/template/spec/hostname"}]`,
			`operation 1 (remove "/spec/template/spec/hostname") does not apply`},
		// gopkg.in/evanphx/json-patch.v4 v4.13.0 panics comparing a list that holds null (withoutPanic).
		{"a test of a list holding null", `[{"op":"add","path":"/metadata/annotations/a","value":[null]},{"op":"test","path":"/metadata/annotations/a","value":[null]}]`,
			`operation 1 (test "/metadata/annotations/a") does not apply to the VM the driver builds: the JSON patch library failed on it`},
		{"an index past the list", `[{"op":"add","path":"/spec/template/spec/volumes/9","value":{}}]`, "the list has no such index"},
		{"a misspelt field", `{"spec":{"template":{"spec":{"domain":{"featurs":{"acpi":{}}}}}}}`,
			`the patched VM is not a KubeVirt VirtualMachine: it has fields KubeVirt does not know: "spec.template.spec.domain.featurs"`},
		{"a field in the wrong case", `{"Spec":{"running":true}}`, `does not know: "Spec"`},
		{"a field in the wrong case, in the VMI spec", `{"spec":{"template":{"spec":{"Hostname":"x"}}}}`, `does not know: "spec.template.spec.Hostname"`},
		{"a value of the wrong type", `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":"60"}}}}`,
			"the patched VM is not a KubeVirt VirtualMachine: spec.template.spec.terminationGracePeriodSeconds must be a whole number, got string"},
		{"a quantity that is none", `{"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"memory":"lots"}}}}}}}`,
			"the patched VM is not a KubeVirt VirtualMachine: quantities must match"},
		{"a time that is none", `{"spec":{"template":{"metadata":{"creationTimestamp":"noon"}}}}`,
			"the patched VM is not a KubeVirt VirtualMachine: a field holds a value not of the form its kind takes"},
		{"many unknown fields", `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1}`,
			`does not know: "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", and 2 more`},
		{"copies that double the VM", hostile.DoublingPatch(25), `(copy "/spec/copy9") does not apply to the VM the driver builds: the copies add more than the 1 MiB a patched VM may hold`},
		{"an operation failing after others", `[{"op":"test","path":"/kind","value":"VirtualMachine"},{"op":"add","path":"/metadata/annotations/a","value":"b"},` +
			`{"op":"remove","path":"/metadata/annotations/a"},{"op":"remove","path":"/metadata/annotations/a"},{"op":"test","path":"/kind","value":"VirtualMachine"}]`,
			`operation 3 (remove "/metadata/annotations/a") does not apply to the VM the driver builds: the VM has nothing there`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := patchedVM(t, config.FlagVMPatch, tt.patch)
			if err == nil || !strings.Contains(err.Error(), "--harvester-vm-patch: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want a problem of --harvester-vm-patch containing %q, got %v", tt.want, err)
			}
		})
	}
}

// What a patch holds may be a secret (a token in an annotation, a password in a volume): no problem repeats a
// value of the patch.
func TestVMPatchProblemsQuoteNoValue(t *testing.T) {
	const secret = "s3cr3t-v4lue-of-the-patch"
	for _, patch := range []string{
		`{"metadata":{"finalizers":["` + secret + `"]}}`,
		`{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":"` + secret + `"}}}}`,
		`[{"op":"test","path":"/kind","value":"` + secret + `"}]`,
		`[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"v","persistentVolumeClaim":{"claimName":"` + secret + `"}}}]`,
		`{"spec":{"template":{"spec":{"domain":{"cpu":{"cores":"` + secret + `"}}}}}}`,
		`{"spec":{"template":{"metadata":{"creationTimestamp":"` + secret + `"}}}}`,
	} {
		_, err := patchedVM(t, config.FlagVMPatch, patch)
		if err == nil {
			t.Errorf("%s: applied", patch)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the problem repeats a value of the patch: %v", patch, err)
		}
	}
}

// ParseConfig refuses a patch when the flags are parsed (check, render and a create's first step), once the
// other flags parse, so a patch is not blamed for a VM that lacks what a broken flag would have made.
func TestVMPatchRefusedWhenParsed(t *testing.T) {
	_, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagVMPatch, `{"metadata":{"labels":null}}`))
	if err == nil || !strings.Contains(err.Error(), "--harvester-vm-patch: changes what the driver owns: metadata.labels[harvesterhci.io/creator]") {
		t.Fatalf("ParseConfig: %v", err)
	}
	disk := `[{"op":"test","path":"/spec/template/spec/domain/devices/disks/1/name","value":"disk-1"}]`
	twoDisks := `{"disks":[{"imageName":"img","size":10},{"storageClassName":"longhorn","size":5}]}`
	if _, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, twoDisks, config.FlagVMPatch, disk)); err != nil {
		t.Fatalf("a patch of the second disk: %v", err)
	}
	_, _, err = ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, `{"disks":[{"size":0}]}`, config.FlagVMPatch, disk))
	if err == nil || strings.Contains(err.Error(), "--harvester-vm-patch") || !strings.Contains(err.Error(), "--harvester-disk-info") {
		t.Fatalf("a broken --harvester-disk-info: want its problem alone, got %v", err)
	}
}

// The VM is patched once, when the flags are parsed, with placeholders where only a create knows the value: a
// patch that copies one out of the driver's parts would send the placeholder, and is refused. The same patch
// copying a value the flags give is applied.
func TestVMPatchMayNotCopyWhatOnlyACreateKnows(t *testing.T) {
	disks := `{"disks":[{"imageName":"img","size":10},{"storageClassName":"longhorn","size":5}]}`
	for what, from := range map[string]string{
		"a claim's name":           "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName",
		"an image's storage class": "/metadata/annotations/harvesterhci.io~1volumeClaimTemplates",
	} {
		patch := `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","secret":{"secretName":"x"}}},` +
			`{"op":"copy","from":"` + from + `","path":"/spec/template/metadata/annotations/example.com~1copy"}]`
		_, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, disks, config.FlagVMPatch, patch))
		if err == nil || !strings.Contains(err.Error(), "--harvester-vm-patch: copies ") || !strings.Contains(err.Error(), what+" out of the driver's parts") &&
			!strings.Contains(err.Error(), what+" and ") {
			t.Errorf("a copy of %s: %v", what, err)
		}
	}
	patch := `[{"op":"copy","from":"/spec/template/spec/domain/devices/disks/1/name","path":"/spec/template/metadata/annotations/example.com~1copy"}]`
	if _, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagDiskInfo, disks, config.FlagVMPatch, patch)); err != nil {
		t.Errorf("a copy of a disk's name: %v", err)
	}
}

// No patch makes the builder panic, whatever it holds.
func FuzzVMPatch(f *testing.F) {
	for _, seed := range []string{vmPatchMerge, vmPatchJSON, `[{"op":"move","from":"/spec","path":"/spec/x"}]`, `[{"op":"copy","from":"","path":"/a"}]`,
		`[{"op":"add","path":"/spec/template/spec/volumes/-1","value":null}]`, `[{"op":"replace","path":"","value":[]}]`, `{"spec":null}`, `[{"op":"test","path":"","value":{}}]`,
		`[{"op":"add","path":"/metadata/annotations/a","value":[null]},{"op":"test","path":"/metadata/annotations/a","value":[null]}]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		cfg, err := config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagVMPatch, patch))
		if err != nil || cfg.VMPatch == nil {
			return
		}
		vm, err := vmFor(cfg)
		if err == nil && (vm.Name != "m1" || vm.Labels[config.LabelCreator] != config.CreatorName) {
			t.Fatalf("patch %q changed the driver's parts: %+v", patch, vm.ObjectMeta)
		}
	})
}
