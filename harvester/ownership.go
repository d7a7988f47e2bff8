package harvester

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// A machine finds its VM by name, and a name can be taken again: a store entry that outlived its VM (a create
// that failed, a VM deleted in Harvester) names a VM that may since have been made by someone else. So a machine
// acts only on the VM it made, known by the VM's UID (Driver.VMUID), or, when a create died before the state
// recorded that UID, by the create's id on the VM (Driver.CreateID, config.AnnotationCreateID). Machines of the
// reference driver and of earlier versions of this one recorded neither: for them the creator label is all
// there is (Remove refuses a VM without it; the power commands check nothing, as before).

// legacyOwnership reports whether the machine's state predates ownership records: then the creator label is
// the only check.
func (d *Driver) legacyOwnership() bool { return d.VMUID == "" && d.CreateID == "" }

// ensureCreateID gives the machine's create its id, once.
func (d *Driver) ensureCreateID() {
	if d.CreateID == "" {
		b := make([]byte, 8)
		rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
		d.CreateID = hex.EncodeToString(b)
	}
}

// markCreate writes the create's id on an object the create makes.
func (d *Driver) markCreate(m *metav1.ObjectMeta) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[config.AnnotationCreateID] = d.CreateID
}

// ownsVM reports whether vm is the machine's own; for a legacy state always (the creator label is checked where it was).
func (d *Driver) ownsVM(vm *kubevirtv1.VirtualMachine) bool {
	switch {
	case d.VMUID != "":
		return string(vm.UID) == d.VMUID
	case d.CreateID != "":
		return vm.Annotations[config.AnnotationCreateID] == d.CreateID
	}
	return true
}

// checkOwnVM returns nil when vm is the machine's own, else a *notOursError saying whose it is not.
func (d *Driver) checkOwnVM(vm *kubevirtv1.VirtualMachine) error {
	if d.ownsVM(vm) {
		return nil
	}
	return &notOursError{ns: vm.Namespace, name: vm.Name, machine: d.MachineName, recordedUID: d.VMUID, createID: d.CreateID,
		foundUID: vm.UID, foundCreateID: vm.Annotations[config.AnnotationCreateID], created: vm.CreationTimestamp.Time}
}

// notOursError says that the VM of the machine's name is not the VM the machine made. The machine's own VM is
// gone; the one of its name is someone else's and is left alone. Its wording never says "not found": that
// would make rancher-machine's rm report success for a failure.
type notOursError struct {
	ns, name, machine string
	recordedUID       string // the machine's VMUID, "" when its create died before the state recorded it
	createID          string
	foundUID          types.UID
	foundCreateID     string
	created           time.Time
}

// whose words what the machine recorded against what was found.
func (e *notOursError) whose() string {
	found := fmt.Sprintf("uid %s, created %s", e.foundUID, e.created.UTC().Format(time.RFC3339))
	if e.recordedUID != "" {
		return fmt.Sprintf("machine %s recorded its VM's uid %s, the VM of that name has %s", e.machine, e.recordedUID, found)
	}
	createdBy := "no create id"
	if e.foundCreateID != "" {
		createdBy = "create id " + e.foundCreateID
	}
	return fmt.Sprintf("machine %s never recorded a VM (its create id is %s), the VM of that name has %s, %s", e.machine, e.createID, createdBy, found)
}

func (e *notOursError) Error() string {
	return fmt.Sprintf("VM %s/%s is not this machine's: %s. The machine's own VM is gone and the VM of that name belongs to someone else; "+
		"it was left alone. Remove the stale machine with `rancher-machine rm -f %s` (in Rancher: delete the machine, with force delete if it hangs)",
		e.ns, e.name, e.whose(), e.machine)
}

// leftAlone is what Remove logs about a VM that is not the machine's.
func (e *notOursError) leftAlone() string {
	return fmt.Sprintf("VM %s/%s is not this machine's (%s) and was left alone; the machine's own VM is gone", e.ns, e.name, e.whose())
}

// ownsSecret reports whether a cloud-init Secret is the machine's own: owned by its VM, or made by its create.
// vmUID is the machine's VM's UID when known (its state's, or the VM's found by the create id). For a legacy
// state it is the driver's labels for this machine name.
func (d *Driver) ownsSecret(s *corev1.Secret, vmUID types.UID) bool {
	if d.legacyOwnership() {
		return s.Labels[config.LabelCreator] == config.CreatorName && s.Labels[config.LabelVMName] == d.MachineName
	}
	if d.CreateID != "" && s.Annotations[config.AnnotationCreateID] == d.CreateID {
		return true
	}
	for _, o := range s.OwnerReferences {
		if vmUID != "" && o.UID == vmUID {
			return true
		}
	}
	return false
}

// getVM reads the machine's VM by name: nil when there is none.
func (d *Driver) getVM(ctx context.Context, c kube.Interface) (*kubevirtv1.VirtualMachine, error) {
	return getNamed(ctx, c, d, "virtualmachines", "VM", c.VirtualMachines(d.namespace()).Get)
}

// getNamed reads the object of the machine's name through get (the typed client of resource, which messages
// call what): nil when there is none.
func getNamed[T any](ctx context.Context, c kube.Interface, d *Driver, resource, what string,
	get func(context.Context, string, metav1.GetOptions) (*T, error)) (*T, error) {
	obj, err := get(ctx, d.MachineName, metav1.GetOptions{})
	switch {
	case kube.IsGone(err, resource, d.MachineName):
		return nil, nil
	case err != nil:
		return nil, c.Explain("read "+what, d.namespace()+"/"+d.MachineName, err)
	}
	return obj, nil
}
