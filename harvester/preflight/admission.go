package preflight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Harvester's VM validator (quota, duplicate MAC addresses, PVC rules, reserved memory) and KubeVirt's admitter
// judge a VM only when it is written, and the pre-flight only reads. The check verb asks them too, without
// writing: it sends the create's Secret and VM with dryRun=All (kube.DryRunAll), which runs every admission
// plugin and webhook and stores nothing. A create does not: the API server judges its objects when it writes
// them, and a dry run before would only add requests.

// The creates the dry runs stand for: a credential needs them for a dry run as for a create (the create's access
// list has them, so the permission table shows them: package harvester's tests hold it to that).
var (
	CreateSecretAccess = kube.Access{Resource: "secrets", Verb: "create"}
	CreateVMAccess     = kube.Access{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachines", Verb: "create"}
)

// checkAdmission makes the Secret and the VM exactly as a create would, from the machine the pre-flight completed
// (objects.Machine.Objects, with the address the IP pool check found and the create's id), and sends them, the
// Secret first, as dry runs. What a create learns only when it runs is stood in for and named in the line: the
// SSH key it generates (Admission.SSHKey: a new one of the same kind, made by the caller and dropped), the
// cloud-provider account's kubeconfig it makes. It is skipped when the machine could not be completed.
func checkAdmission(ctx context.Context, r *run) {
	ns := r.cfg.Namespace
	if r.blocked() != "" {
		return // the line says why
	}
	r.await(CheckPermissions)
	denied, reviewed := r.found.denied, r.found.reviewed
	if slices.Contains(denied, CreateSecretAccess) && slices.Contains(denied, CreateVMAccess) {
		r.u.addf("the credential may not create secrets and virtualmachines in namespace %s, which a create needs: neither the Secret nor the VM was sent", ns)
		return
	}
	r.await(CheckImagesKeyPairs)
	if !r.found.looked {
		r.u.addf("the VM cannot be built as a create builds it: an image or a key pair could not be used")
		return
	}
	if dataSecretsGiven(r.in) {
		r.await(CheckDataSecrets)
		if r.found.data == nil {
			r.u.addf("the VM cannot be built as a create builds it: the user data or network data kept in a Secret could not be used")
			return
		}
	}
	r.await(CheckIPPool)
	addresses := r.found.addresses
	if r.in.Machine.Addresses != nil && len(addresses) == 0 {
		r.u.addf("the VM cannot be built as a create builds it: the IP pool check found no address for it")
		return
	}
	secret, vm, assumed, err := r.admissionObjects(addresses)
	if err != nil {
		r.p.Addf("", "%v", err)
		return
	}
	var assumptions string
	if len(assumed) > 0 {
		assumptions = "assumed: " + strings.Join(assumed, "; ")
	}
	note := strings.TrimSuffix("dry run; "+assumptions, "; ") // after a refusal: what was judged
	var accepted []string
	ask := func(kind string, name string, access kube.Access, create func() error) {
		object := kind + " " + ns + "/" + name
		// What the API server said. An admission policy's message, as a webhook's, may quote the object it judges:
		// the client's screen has withheld every run of the secrets the driver holds from it (kube.Screen), the
		// cloud-init Secret's content among them.
		said := kube.ServerMessage
		if slices.Contains(denied, access) {
			r.u.addf("the credential may not %s in namespace %s, which a create needs: %s was not sent", access, ns, object)
			return
		}
		err := create()
		switch refusal, refused := kube.AsWebhookRefusal(err); {
		case err == nil:
			accepted = append(accepted, object)
		case refused:
			r.p.Addf("", "%s: %s (%s)", object, refusedBy(refusal), note)
		case apierrors.IsAlreadyExists(err):
			r.p.Addf("", "%s already exists: the cluster's admission lets the create through, and the API server refuses it for its name; "+
				"choose another machine name or remove that %s", object, kind)
		case apierrors.IsForbidden(err) && reviewed:
			r.p.Addf("", "%s: forbidden although the credential's role allows the create: an admission plugin or policy of Harvester refuses it (%s)",
				object, said(err))
		case apierrors.IsForbidden(err):
			r.p.Addf("", "the credential may not %s in namespace %s, which a create needs (403 Forbidden: %s)", access, ns, said(err))
		case apierrors.IsInvalid(err):
			r.p.Addf("", "%s: the API server refuses it as invalid: %s (%s)", object, said(err), note)
		default:
			if webhook, ok := kube.DryRunUnsupportedBy(err); ok {
				r.u.addf("admission webhook %s does not support dry runs (its sideEffects is neither None nor NoneOnDryRun): it cannot judge %s without a real create",
					webhook, object)
				return
			}
			r.p.Addf("", "%v", r.c.Explain("ask the cluster's admission about", object, err))
		}
	}
	ask("Secret", secret.Name, CreateSecretAccess, func() error {
		_, err := kube.DryRunCreate(ctx, r.c, kube.Secrets, ns, secret)
		return err
	})
	ask("VM", vm.Name, CreateVMAccess, func() error {
		_, err := r.c.VirtualMachines(ns).Create(ctx, vm, kube.DryRunAll())
		return err
	})
	if len(r.p.List) == 0 && len(r.u) == 0 {
		r.detail = lists.Join(accepted, "and") + " accepted in a dry run, nothing written"
		if assumptions != "" {
			r.detail += " (" + assumptions + ")"
		}
	}
}

// admissionObjects makes the Secret and the VM a create would send, from the machine completed with what the
// checks read, and says what it assumed for what only a create learns.
func (r *run) admissionObjects(addresses []*objects.StaticAddress) (*corev1.Secret, *kubevirtv1.VirtualMachine, []string, error) {
	cfg := r.cfg
	var assumed []string
	if cfg.SSH.PrivateKeyPath == "" {
		assumed = append(assumed, "a new SSH key, as a create makes one")
	}
	guestKubeconfig := cfg.CloudProvider.Kubeconfig
	if cfg.CloudProvider.Generate {
		guestKubeconfig = objects.GeneratedKubeconfigPlaceholder(cfg)
		assumed = append(assumed, "a stand-in for the kubeconfig of the cloud-provider account a create makes")
	}
	for _, a := range addresses {
		assumed = append(assumed, fmt.Sprintf("address %s, the pool's first free", a.Address.Addr()))
	}
	machine := r.found.completed(r.in.Draw)
	if machine == nil {
		return nil, nil, nil, errors.New("the machine could not be completed with what the pre-flight read")
	}
	secret, vm, err := machine.Objects(objects.Learned{SSHKey: r.in.Admission.SSHKey, GuestKubeconfig: guestKubeconfig, Addresses: addresses})
	if err != nil {
		return nil, nil, nil, err
	}
	return secret, vm, assumed, nil
}

// refusedBy words a webhook's refusal.
func refusedBy(refusal kube.WebhookRefusal) string {
	if refusal.Message == "" {
		return fmt.Sprintf("admission webhook %s refuses it without a reason", refusal.Webhook)
	}
	return fmt.Sprintf("admission webhook %s refuses it: %s", refusal.Webhook, refusal.Message)
}
