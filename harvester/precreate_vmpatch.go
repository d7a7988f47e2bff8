package harvester

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// A VM patch may give the guest a Secret, ConfigMap or ServiceAccount of the VM namespace only when an admin who
// may write that object in Harvester labelled it config.LabelVMPatchAllowed=true (why: harvester/objects,
// vmpatch_refs.go). The pre-flight reads each object the patch names; the create checks the VM it sends names no
// other, reading now what no pre-flight of this process allowed.

// vmPatchObjectAccess is what reading the objects of a VM patch needs in the VM namespace, each for the kinds the
// patch names. The check makes the reads itself and refuses a patch whose object it may not read (what cannot be
// read cannot be shown allowed), so the access review (neededAccess) does not ask again.
var vmPatchObjectAccess = []kube.Access{{Resource: "secrets", Verb: "get"}, {Resource: "configmaps", Verb: "get"}, {Resource: "serviceaccounts", Verb: "get"}}

func vmPatchGiven(cfg *config.Config) bool { return cfg.VMPatch != nil }

// checkVMPatchObjects reads the objects --harvester-vm-patch gives the guest (objects.ObjectRefs of the VM SetConfigFromFlags built) and
// refuses each that no admin allowed (allowPatchObjects). What it allowed is its findings, which Create uses.
func checkVMPatchObjects(ctx context.Context, r *checkRun) {
	refs := objects.ObjectRefs(r.draft.VM)
	if len(refs) == 0 {
		r.detail = "the patch gives the guest no object of the namespace"
		return
	}
	allowed := allowPatchObjects(ctx, r.c, r.cfg.Namespace, refs, &r.p)
	if allowed == nil {
		return
	}
	r.findings = allowed
	names := make([]string, len(refs))
	for i, ref := range refs {
		names[i] = ref.Kind + " " + ref.Name
	}
	r.detail = strings.Join(names, ", ") + ": allowed by " + config.LabelVMPatchAllowed
}

// patchObjectKey names an object of a VM patch in the set allowPatchObjects returns.
func patchObjectKey(ref objects.ObjectRef) string { return ref.Kind + "/" + ref.Name }

// allowPatchObjects reads each object of refs in namespace ns and returns them as allowed (by patchObjectKey), or
// nil with a problem under --harvester-vm-patch for each that does not exist, that the credential may not read,
// that the driver made (another machine's cloud-init Secret, a guest cluster's cloud-provider account: never), or
// that lacks the label. A problem names the object and where the VM names it, never what it holds.
func allowPatchObjects(ctx context.Context, c kube.Interface, ns string, refs []objects.ObjectRef, p *config.Problems) map[string]bool {
	before := len(p.List)
	allowed := map[string]bool{}
	for _, ref := range refs {
		labels, err := patchObjectLabels(ctx, c, ns, ref)
		switch {
		case kube.IsGone(err, strings.ToLower(ref.Kind)+"s", ref.Name):
			p.Addf(config.FlagVMPatch, "gives the guest %s, which does not exist in namespace %s: fix the name, or take it out of the patch", ref, ns)
		case apierrors.IsForbidden(err):
			p.Addf(config.FlagVMPatch, "gives the guest %s, which the credential may not read (403 Forbidden) to see whether an admin allowed it: "+
				"ask for a Harvester role that may get %ss in namespace %s, or take it out of the patch", ref, strings.ToLower(ref.Kind), ns)
		case err != nil:
			p.Addf(config.FlagVMPatch, "%v", c.Explain("read", ref.Kind+" "+ns+"/"+ref.Name+" (of the VM patch)", err))
		case labels[config.LabelCreator] == config.CreatorName:
			p.Addf(config.FlagVMPatch, "gives the guest %s, which a node driver made (a machine's cloud-init Secret, a guest cluster's cloud-provider account): "+
				"a patch may never give it to a guest; take it out of the patch", ref)
		case labels[config.LabelVMPatchAllowed] != "true":
			p.Addf(config.FlagVMPatch, "gives the guest %s, which no admin allowed: a patch may not bring into the guest what the pool's editor may not read. "+
				"An admin who may write it in Harvester allows it with: %s", ref, ref.AllowCommand(ns))
		default:
			allowed[patchObjectKey(ref)] = true
		}
	}
	if len(p.List) > before {
		return nil
	}
	return allowed
}

// patchObjectLabels reads the object of ref in namespace ns and returns its labels.
func patchObjectLabels(ctx context.Context, c kube.Interface, ns string, ref objects.ObjectRef) (map[string]string, error) {
	switch ref.Kind {
	case objects.KindSecret:
		o, err := kube.Get(ctx, c, kube.Secrets, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		return o.Labels, nil
	case objects.KindConfigMap:
		o, err := kube.Get(ctx, c, kube.ConfigMaps, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		return o.Labels, nil
	}
	o, err := kube.Get(ctx, c, kube.ServiceAccounts, ns, ref.Name)
	if err != nil {
		return nil, err
	}
	return o.Labels, nil
}

// allowPatchObjectsOf makes sure every object vm, the VM a create sends, names for its guest is one an admin
// allowed: those the pre-flight allowed (d.patchObjects), the others read now.
func (d *Driver) allowPatchObjectsOf(ctx context.Context, c kube.Interface, vm *kubevirtv1.VirtualMachine) error {
	var unread []objects.ObjectRef
	for _, ref := range objects.ObjectRefs(vm) {
		if !d.patchObjects[patchObjectKey(ref)] {
			unread = append(unread, ref)
		}
	}
	if len(unread) == 0 {
		return nil
	}
	var p config.Problems
	if allowPatchObjects(ctx, c, vm.Namespace, unread, &p) == nil {
		return p.ErrTitled("cannot create the machine on Harvester")
	}
	return nil
}
