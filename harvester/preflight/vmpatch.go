package preflight

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// A VM patch may give the guest a Secret, ConfigMap or ServiceAccount of the VM namespace only when an admin who
// may write that object in Harvester labelled it config.LabelVMPatchAllowed=true (why: harvester/objects,
// vmpatch_refs.go). The pre-flight reads each object the patched VM names for its guest: the VM the create sends,
// whose other parts only the driver's own change after (objects.Machine), so it names no other.

// VMPatchObjectAccess is what reading the objects of a VM patch needs in the VM namespace, each for the kinds the
// patch names. The check makes the reads itself and refuses a patch whose object it may not read (what cannot be
// read cannot be shown allowed), so the access review (Input.Needed) does not ask again.
var VMPatchObjectAccess = []kube.Access{{Resource: "secrets", Verb: "get"}, {Resource: "configmaps", Verb: "get"}, {Resource: "serviceaccounts", Verb: "get"}}

func vmPatchGiven(in *Input) bool { return in.Machine.Config().VMPatch != nil }

// checkVMPatchObjects reads the objects the patched VM gives the guest (objects.ObjectRefs) and refuses each that
// no admin allowed (allowPatchObjects).
func checkVMPatchObjects(ctx context.Context, r *run) {
	refs := objects.ObjectRefs(r.in.Machine.VM)
	if len(refs) == 0 {
		r.detail = "the patch gives the guest no object of the namespace"
		return
	}
	if !allowPatchObjects(ctx, r.c, r.cfg.Namespace, refs, &r.p) {
		return
	}
	names := make([]string, len(refs))
	for i, ref := range refs {
		names[i] = ref.Kind + " " + ref.Name
	}
	r.detail = strings.Join(names, ", ") + ": allowed by " + config.LabelVMPatchAllowed
}

// allowPatchObjects reads each object of refs in namespace ns and reports whether each is allowed, with a problem
// under --harvester-vm-patch for each that does not exist, that the credential may not read,
// that the driver made (another machine's cloud-init Secret, a guest cluster's cloud-provider account: never), or
// that lacks the label. A problem names the object and where the VM names it, never what it holds.
func allowPatchObjects(ctx context.Context, c kube.Interface, ns string, refs []objects.ObjectRef, p *config.Problems) bool {
	before := len(p.List)
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
		}
	}
	return len(p.List) == before
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
