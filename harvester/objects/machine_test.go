package objects

import (
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// The VM is built and patched once, when the flags are parsed: completing it with the cluster's facts and the
// create's draws, then sending it, fills in the driver's own parts and patches nothing again (a patch that adds a
// volume adds one), and what the draft held as placeholders the sent VM holds as facts.
func TestMachineIsPatchedOnce(t *testing.T) {
	patch := `[{"op":"add","path":"/spec/template/spec/domain/devices/disks/-","value":{"name":"scratch","disk":{"bus":"virtio"}}},` +
		`{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"scratch","emptyDisk":{"capacity":"2Gi"}}}]`
	cfg, draft, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagVMPatch, patch))
	if err != nil {
		t.Fatal(err)
	}
	m, err := draft.Complete(factsFor(cfg), Draw{ClaimSuffix: "abcde", CreateID: "create-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, vm, err := m.Objects(Learned{SSHKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3Ir0Yd3GLjVfVKTXOzYHTiEx+UHTNvJnRyTFBkdGvS driver"})
	if err != nil {
		t.Fatal(err)
	}
	scratch := 0
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if v.Name == "scratch" {
			scratch++
		}
	}
	if scratch != 1 {
		t.Errorf("the sent VM has %d scratch volumes, want the patch's one", scratch)
	}
	claim := vm.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim
	if claim == nil || claim.ClaimName != "m1-disk-0-abcde" || vm.Annotations[config.AnnotationCreateID] != "create-1" {
		t.Errorf("the sent VM's claim %+v and create id %q: want the draws", claim, vm.Annotations[config.AnnotationCreateID])
	}
	if draft.VM.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "m1-disk-0-<random>" || draft.VM.Annotations[config.AnnotationCreateID] != "" {
		t.Error("completing the machine changed the draft")
	}
}
