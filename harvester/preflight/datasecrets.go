package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// The user data and network data a user keeps in Harvester (--harvester-user-data-secret,
// --harvester-network-data-secret) are read from their Secret, in the VM namespace, by the pre-flight, which
// completes the machine with them (objects.Facts): the create sends them, in the same process a moment later.
// What is read is held in memory only: it goes into the driver's own cloud-init Secret as inline user data
// does, never into the machine's saved state (Driver keeps it unexported) nor into a log line. The user's Secret
// is only read: never written, labelled, owned or deleted. Remove and the rollback act on the driver's own
// cloud-init Secret alone, by its name and the create's id or its VM's UID (ownsSecret), and a data Secret may
// not take that name (readDataSecrets).

// DataSecretAccess is what reading the data Secrets needs in the VM namespace. The pre-flight's check makes the
// read itself and reports a refused one as its problem, so the access review (Input.Needed) does not ask again.
var DataSecretAccess = []kube.Access{{Resource: "secrets", Verb: "get"}}

// dataSecrets is what the data Secrets' keys hold, read and checked: nil for a flag not given.
type dataSecrets struct {
	user, network *config.SecretValue
}

// secretRead is one GET of a Secret: what it returned.
type secretRead struct {
	secret *corev1.Secret
	err    error
}

// readDataSecrets reads the Secrets cfg names for its user data and network data — one GET each, one for both
// when both name the same Secret — and checks what their keys hold as the create will use it: within the bounds
// of the inline flags, then as cloud-init reads it (the user data merged as objects.ParseConfig merges inline
// user data, the network-config as --harvester-network-data is checked). It returns nil when it found a problem,
// each recorded in p under its flag, naming the Secret and never quoting what it holds.
func readDataSecrets(ctx context.Context, c kube.Interface, cfg *config.Config, p *config.Problems) *dataSecrets {
	reads := map[string]secretRead{}
	before := len(p.List)
	found := &dataSecrets{}
	for _, s := range []struct {
		ref   *config.SecretKeyRef
		value **config.SecretValue
	}{
		{cfg.UserDataSecret, &found.user},
		{cfg.NetworkDataSecret, &found.network},
	} {
		ref := s.ref
		if ref == nil {
			continue
		}
		if own := objects.CloudInitSecretName(cfg.MachineName); ref.Name == own {
			p.Addf(ref.Flag, "%s is the cloud-init Secret the driver makes for machine %s (with the merged user data, and deletes with it): keep your data in a Secret of another name",
				ref, cfg.MachineName)
			continue
		}
		read, done := reads[ref.Name]
		if !done {
			read.secret, read.err = kube.Get(ctx, c, kube.Secrets, ref.Namespace, ref.Name)
			reads[ref.Name] = read
		}
		if err := read.err; err != nil {
			addReadProblem(c, p, ref, err)
			continue
		}
		if why := notTheUsers(read.secret); why != "" {
			p.Addf(ref.Flag, "%s %s; keep your data in a Secret of your own", ref, why)
			continue
		}
		*s.value = secretValue(p, ref, read.secret)
	}
	if found.user != nil {
		objects.CheckUserData(p, cfg.WithSecretData(found.user, nil))
	}
	if len(p.List) > before {
		return nil
	}
	return found
}

// notTheUsers says why s is no Secret a user keeps their data in, or "": it is one a node driver made — another
// machine's cloud-init Secret (objects.CloudInitSecret) or a guest cluster's cloud-provider token
// (guestaccount.Ensure), both labelled config.LabelCreator — or a VM's own cloud-init Secret (the reference
// driver's and Harvester's UI's carry no such label, but the VM as their owner), or a service account's token. Each
// holds another machine's join token or a credential of Harvester, which must not reach this guest, whose users
// could read it there.
func notTheUsers(s *corev1.Secret) string {
	if v := s.Labels[config.LabelCreator]; v == config.CreatorName {
		return fmt.Sprintf("was made by a node driver (label %s=%s): another machine's cloud-init Secret or a guest cluster's cloud-provider token, "+
			"which hold that machine's join token and Harvester credentials", config.LabelCreator, config.CreatorName)
	}
	for _, o := range s.OwnerReferences {
		if o.Kind == "VirtualMachine" && strings.HasPrefix(o.APIVersion, kubevirtv1.SchemeGroupVersion.Group+"/") {
			return fmt.Sprintf("belongs to VirtualMachine %s (its owner): it is that VM's cloud-init, which may hold its join token and passwords", o.Name)
		}
	}
	if s.Type == corev1.SecretTypeServiceAccountToken {
		return fmt.Sprintf("is a service account's token (type %s), a Harvester credential", corev1.SecretTypeServiceAccountToken)
	}
	return ""
}

// addReadProblem records why the Secret of ref could not be read.
func addReadProblem(c kube.Interface, p *config.Problems, ref *config.SecretKeyRef, err error) {
	switch {
	case kube.IsGone(err, "secrets", ref.Name):
		p.Addf(ref.Flag, "%s does not exist; create it in namespace %s (kubectl -n %s create secret generic %s --from-file=%s=FILE), or fix the name",
			ref, ref.Namespace, ref.Namespace, ref.Name, ref.Keys()[0])
	case apierrors.IsForbidden(err):
		p.Addf(ref.Flag, "the credential may not read %s (403 Forbidden): ask for a Harvester role that may get secrets in namespace %s",
			ref, ref.Namespace)
	default:
		p.Addf(ref.Flag, "%v", c.Explain("read", ref.String(), err))
	}
}

// secretValue is the value of ref's key in s, checked as config.CheckSecretData checks it; nil on a problem,
// recorded in p.
func secretValue(p *config.Problems, ref *config.SecretKeyRef, s *corev1.Secret) *config.SecretValue {
	keys := ref.Keys()
	i := slices.IndexFunc(keys, func(k string) bool { _, ok := s.Data[k]; return ok })
	if i < 0 {
		p.Addf(ref.Flag, "Secret %s/%s has no key %s (%s); name the key as %s:KEY", ref.Namespace, ref.Name, lists.Join(keys, "or"), secretKeys(s), ref.Name)
		return nil
	}
	at := *ref
	at.Key = keys[i]
	before := len(p.List)
	if config.CheckSecretData(p, &at, s.Data[at.Key]); len(p.List) > before {
		return nil
	}
	return &config.SecretValue{Key: at.Key, Data: s.Data[at.Key]}
}

// secretKeys names a Secret's keys for a message, sorted, at most ten of them.
func secretKeys(s *corev1.Secret) string {
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	switch n := len(keys); {
	case n == 0:
		return "it has none"
	case n > 10:
		return fmt.Sprintf("its keys: %s and %d more", strings.Join(keys[:10], ", "), n-10)
	}
	return "its keys: " + lists.Join(keys, "and")
}

// dataOf says what a data Secret holds: "user data" or "network data".
func dataOf(ref *config.SecretKeyRef) string {
	if ref.Flag == config.FlagUserDataSecret {
		return "user data"
	}
	return "network data"
}

func dataSecretsGiven(in *Input) bool {
	cfg := in.Machine.Config()
	return cfg.UserDataSecret != nil || cfg.NetworkDataSecret != nil
}

// checkDataSecrets reads the Secrets of --harvester-user-data-secret and --harvester-network-data-secret and
// checks what they hold as the create will use it (readDataSecrets): the Secret exists and the credential may
// read it, the key is there, the value is within the inline flags' bounds and cloud-init reads it. What they
// hold completes the machine the create sends (found.data). It is skipped when the namespace does not exist.
func checkDataSecrets(ctx context.Context, r *run) {
	found := readDataSecrets(ctx, r.c, r.cfg, &r.p)
	if found == nil {
		return
	}
	r.found.data = found
	var seen []string
	cfg := r.cfg.WithSecretData(found.user, found.network)
	for _, v := range []struct {
		ref   *config.SecretKeyRef
		value *config.SecretValue
	}{{cfg.UserDataSecret, found.user}, {cfg.NetworkDataSecret, found.network}} {
		if v.ref != nil {
			logging.Debugf("Using the %s of %s", dataOf(v.ref), v.ref) // what the create sends, in the completed machine
			seen = append(seen, dataOf(v.ref)+" from "+v.ref.String()+" ("+v.value.Size()+")")
		}
	}
	r.detail = strings.Join(seen, "; ")
}
