package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// --harvester-vm-patch through rancher-machine (harvester/harvester#8408): a patch that would take the driver's
// labels away is refused before anything is made; a JSON patch from a file sets fields no flag covers — the
// domain's clock, the termination grace period, an annotation of the user's — and KubeVirt stores them on the VM
// and carries the template's into the VMI. Harvester's mutator writes its default grace period only into a VM
// without one (pkg/webhook/resources/virtualmachine/mutator.go, patchTerminationGracePeriodSeconds), so the
// patch's survives admission. rm leaves nothing.
func TestVMPatchThroughRancherMachine(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())

	r := cli.run(append(createArgs(t, ns, "--harvester-vm-patch", `{"metadata":{"labels":null}}`), "patch-refused")...)
	if r.Err == nil {
		t.Fatalf("a patch of the driver's labels was applied: %s", r)
	}
	if want := "--harvester-vm-patch: changes what the driver owns: metadata.labels[harvesterhci.io/creator]"; !strings.Contains(r.Output, want) {
		t.Errorf("the refusal does not say %q:\n%s", want, r.Output)
	}
	nothingLeft(t, b, ns)

	file := filepath.Join(t.TempDir(), "patch.json")
	patch := `[{"op":"add","path":"/spec/template/spec/domain/clock","value":{"utc":{},"timer":{"rtc":{"tickPolicy":"catchup"}}}},
 {"op":"add","path":"/spec/template/spec/terminationGracePeriodSeconds","value":120},
 {"op":"add","path":"/metadata/annotations/example.com~1owner","value":"team-ml"}]
`
	if err := os.WriteFile(file, []byte(patch), 0o600); err != nil {
		t.Fatal(err)
	}
	const name = "patch-1"
	quiet(t, cli.must(append(createArgs(t, ns, "--harvester-vm-patch", file), name)...))

	vm := getVM(t, b, ns, name)
	if vm.Annotations["example.com/owner"] != "team-ml" || vm.Labels[config.LabelCreator] != config.CreatorName {
		t.Errorf("annotations %v, labels %v", vm.Annotations, vm.Labels)
	}
	vmi := vmiRunning(t, b, ns, name)
	for what, spec := range map[string]kubevirtv1.VirtualMachineInstanceSpec{"VM": vm.Spec.Template.Spec, "VMI": vmi.Spec} {
		clock := spec.Domain.Clock
		if clock == nil || clock.UTC == nil || clock.Timer == nil || clock.Timer.RTC == nil || clock.Timer.RTC.TickPolicy != kubevirtv1.RTCTickPolicyCatchup {
			t.Errorf("%s: clock %+v, want the patch's", what, clock)
		}
		if g := spec.TerminationGracePeriodSeconds; g == nil || *g != 120 {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want the patch's 120", what, g)
		}
	}

	cli.must("rm", "-y", name)
	nothingLeft(t, b, ns)
}
