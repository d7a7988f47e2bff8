package preflight

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// checkCredential reads the machine's namespace: the first read proves the credential. When it fails for any
// reason but absence or a forbidden read, nothing else would work either, so that one error is the whole answer
// (what the other checks found is dropped). What the read found is the namespace check's (found.namespaceErr).
func checkCredential(ctx context.Context, r *run) {
	ns := r.cfg.Namespace
	_, err := kube.GetCached(ctx, r.c, kube.Namespaces, "", ns)
	if err != nil && !kube.IsGone(err, "namespaces", ns) && !apierrors.IsForbidden(err) {
		r.fail(config.FlagKubeconfigContent, r.c.Explain("read namespace", ns, err))
		return
	}
	var expiry connection.Expiry
	if r.in.CredentialExpiry != nil {
		expiry = r.in.CredentialExpiry(ctx)
	}
	r.detail = credentialDetail(expiry, time.Now())
	r.found.namespaceErr = err
}

// checkNamespace tells what the credential check's read of the namespace found. The checks that need it are
// skipped when the namespace does not exist.
func checkNamespace(_ context.Context, r *run) {
	ns := r.cfg.Namespace
	r.detail = ns
	r.await(CheckCredential)
	switch err := r.found.namespaceErr; {
	case err == nil:
	case apierrors.IsForbidden(err):
		// Users scoped to a namespace may not read namespaces; the permissions check covers them.
		r.u.addf("the credential may not get namespaces: cannot tell whether namespace %s exists", ns)
	default: // absent: checkCredential ends the pre-flight on any other failure
		r.p.Addf(config.FlagVMNamespace, "namespace %s does not exist in Harvester", ns)
		r.blocks = "namespace " + ns + " does not exist"
	}
}

// credentialDetail says when a working credential's token expires, with the create's warning when that is soon.
func credentialDetail(e connection.Expiry, now time.Time) string {
	if w := connection.ExpiryWarning(e, now); w != "" {
		return w
	}
	if e.At.IsZero() {
		return "accepted by Harvester"
	}
	return fmt.Sprintf("accepted by Harvester; its token expires at %s, in %s", e.At.Format(time.RFC3339), connection.RoundDuration(e.At.Sub(now)))
}

// checkAccess asks the API server whether the credential may do what the machine's life needs in its namespace
// (Input.Needed). What it finds is what the credential may not do (found.denied), unless the review failed.
func checkAccess(ctx context.Context, r *run) {
	denied, err := r.c.Denied(ctx, r.cfg.Namespace, r.in.Needed)
	if err == nil {
		r.found.denied, r.found.reviewed = denied, true
	}
	switch {
	case err != nil:
		r.p.Addf(config.FlagKubeconfigContent, "%v", r.c.Explain("check the credential's permissions in namespace", r.cfg.Namespace, err))
	case len(denied) > 0:
		what := make([]string, len(denied))
		for i, a := range denied {
			what[i] = a.String()
		}
		r.p.Addf(config.FlagKubeconfigContent, "the credential may not %s in namespace %s; ask for a Harvester role that allows managing VMs there",
			lists.Join(what, "and"), r.cfg.Namespace)
	}
}

// checkNameFree makes sure neither the machine's VM nor its cloud-init Secret exists already, as the create will:
// even a Secret this driver left behind without its VM is in the way (see SecretInTheWay).
func checkNameFree(ctx context.Context, r *run) {
	ns, name := r.in.Machine.VM.Namespace, r.in.Machine.VM.Name
	var vmTaken config.Problems // the two reads run at once; the VM's problem is told first
	var read sync.WaitGroup
	read.Go(func() {
		vm, err := r.c.VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{ResourceVersion: kube.FromCache})
		switch {
		case err == nil:
			vmTaken.Addf("", "a VirtualMachine named %s already exists in namespace %s (created by %s); choose another machine name or remove that VM",
				name, ns, creatorOf(vm.Labels))
		case !kube.IsGone(err, "virtualmachines", name):
			vmTaken.Addf("", "%v", r.c.Explain("check whether VM", ns+"/"+name+" exists", err))
		}
	})
	secretName := objects.CloudInitSecretName(name)
	secret, err := kube.GetCached(ctx, r.c, kube.Secrets, ns, secretName)
	read.Wait()
	r.p.List = append(r.p.List, vmTaken.List...)
	switch {
	case err == nil:
		r.p.Addf("", "%s", SecretInTheWay(ns, secretName, name, secret))
	case err != nil && !kube.IsGone(err, "secrets", secretName):
		r.p.Addf("", "%v", r.c.Explain("check whether Secret", ns+"/"+secretName+" exists", err))
	}
}

func creatorOf(labels map[string]string) string {
	if v := labels[config.LabelCreator]; v != "" {
		return v
	}
	return "someone else"
}

// SecretInTheWay words an existing Secret s of the cloud-init Secret's name (ns/name) of machine, for the
// pre-flight and the create.
func SecretInTheWay(ns, name, machine string, s *corev1.Secret) string {
	if isStaleCloudInitSecret(s.Labels, s.OwnerReferences, machine) {
		return fmt.Sprintf("cloud-init Secret %s/%s already exists without a VM: another create of machine %s is running, or one died before making its VM "+
			"(created %s). It is left alone; if no create of that name is running, delete it (kubectl -n %s delete secret %s) or choose another machine name",
			ns, name, machine, s.CreationTimestamp.UTC().Format(time.RFC3339), ns, name)
	}
	return fmt.Sprintf("a Secret named %s already exists in namespace %s and is not a leftover of this driver; remove it or choose another machine name", name, ns)
}

// isStaleCloudInitSecret reports whether a Secret is this driver's cloud-init Secret for vmName that lost its VM
// (a create that was killed between creating the Secret and the VM).
func isStaleCloudInitSecret(labels map[string]string, owners []metav1.OwnerReference, vmName string) bool {
	return labels[config.LabelCreator] == config.CreatorName && labels[config.LabelVMName] == vmName && len(owners) == 0
}

// errWording is how a failed read is named in a debug line: forbidden reads are expected of scoped credentials.
func errWording(err error) string {
	var tooLarge *kube.ResponseTooLargeError
	switch {
	case apierrors.IsForbidden(err):
		return "not allowed"
	case errors.As(err, &tooLarge):
		return tooLarge.Error() // without client-go's "unexpected error when reading response body. Please retry"
	}
	return config.Redact(err.Error())
}
