package preflight

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// checkImagesKeyPairs looks up the images and key pairs (lookUp) and completes the machine with what it found
// (found.machine): each image disk's claim takes its image's storage class, for the checks of the storage classes
// and the quota. A disk naming another class than its image's is its problem. When an image or a key pair cannot
// be used, the images' classes are left unknown.
func checkImagesKeyPairs(ctx context.Context, r *run) {
	facts, err := lookUp(ctx, r.c, r.cfg)
	var cerr *config.ConfigError
	switch {
	case err == nil:
		r.found.facts, r.found.looked = facts, true
	case errors.As(err, &cerr):
		r.p.List = cerr.Problems
		facts = objects.Facts{}
	default:
		r.fail("", err)
		return
	}
	m, err := r.in.Machine.Complete(facts, r.in.Draw)
	switch {
	case errors.As(err, &cerr):
		r.p.List, r.found.looked = append(r.p.List, cerr.Problems...), false
	case err != nil:
		r.fail("", err)
	default:
		r.found.machine = m
	}
}

// machine is the machine as the images' check completed it, or the draft when it could not: what the storage
// classes' and the quota's checks judge (an image's class is then not known).
func (r *run) machine() *objects.Machine {
	r.await(CheckImagesKeyPairs)
	if m := r.found.machine; m != nil {
		return m
	}
	return r.in.Machine
}

// ImageAccess is what lookUp needs to read an image, in the image's namespace: a refused read is the images'
// check's problem (describeLookupError), so the access review (Input.Needed) does not ask for it.
var ImageAccess = []kube.Access{{Group: kube.HarvesterGroupVersion.Group, Resource: "virtualmachineimages", Verb: "get"}}

// KeyPairAccess is what readKeyPair needs, in the key pair's namespace; a refused read is the images' check's
// problem.
var KeyPairAccess = []kube.Access{{Group: kube.HarvesterGroupVersion.Group, Resource: "keypairs", Verb: "get"}}

// lookUp reads every image and the key pairs the configuration names and checks they can be used: it returns
// their facts (the images' storage classes, the key pairs' public keys), and every problem as a
// *config.ConfigError, an API error other than "does not exist" as such.
func lookUp(ctx context.Context, c kube.Interface, cfg *config.Config) (objects.Facts, error) {
	var p config.Problems
	facts := objects.Facts{ImageStorageClasses: map[config.Ref]string{}}
	for _, disk := range cfg.Disks {
		if disk.Image == nil {
			continue
		}
		if _, done := facts.ImageStorageClasses[*disk.Image]; done {
			continue
		}
		img, err := kube.GetCached(ctx, c, kube.Images, disk.Image.Namespace, disk.Image.Name)
		if err != nil {
			p.Addf(disk.Flag, "%v", describeLookupError(c, "image", *disk.Image, err))
			continue
		}
		if err := checkImage(img); err != nil {
			p.Addf(disk.Flag, "%v", err)
			continue
		}
		facts.ImageStorageClasses[*disk.Image] = img.Status.StorageClassName
	}
	if ref := cfg.SSH.KeyPair; ref != nil {
		if key := readKeyPair(ctx, c, &p, config.FlagKeyPairName, *ref); key != "" {
			facts.KeyPairKeys = append(facts.KeyPairKeys, key)
		}
	}
	for _, ref := range cfg.SSH.ExtraKeyPairs {
		if key := readKeyPair(ctx, c, &p, config.FlagSSHKeyPairs, ref); key != "" {
			facts.KeyPairKeys = append(facts.KeyPairKeys, key)
		}
	}
	return facts, p.ErrTitled("cannot create the machine on Harvester")
}

// readKeyPair returns the public key of a Harvester KeyPair that Harvester has validated, or records under flag
// why it cannot be used and returns "". Harvester's KeyPair controller parses spec.publicKey and sets the
// validated condition (harvester/harvester pkg/controller/master/keypair/controller.go): a key it could not parse
// would let no one in, so it is refused here rather than installed. That controller parses only the first line,
// so a key pair of several lines is refused too: the others were never checked, and each would become a line of
// the guest's authorized_keys.
func readKeyPair(ctx context.Context, c kube.Interface, p *config.Problems, flag string, ref config.Ref) string {
	kp, err := kube.GetCached(ctx, c, kube.KeyPairs, ref.Namespace, ref.Name)
	switch {
	case apierrors.IsForbidden(err):
		p.Addf(flag, "the credential may not read key pair %s (403 Forbidden: %v), so its public key cannot be installed; "+
			"ask for a Harvester role that may get keypairs (harvesterhci.io) in namespace %s, or leave the key pair out", ref, err, ref.Namespace)
		return ""
	case err != nil:
		p.Addf(flag, "%v", describeLookupError(c, "key pair", ref, err))
		return ""
	}
	key := strings.TrimSpace(kp.Spec.PublicKey)
	switch {
	case !kube.ConditionTrue(kp.Status.Conditions, kube.ConditionValidated) || key == "":
		p.Addf(flag, "key pair %s is not validated by Harvester (no valid public key); fix or recreate it in Harvester", ref)
	case strings.ContainsAny(key, "\r\n"):
		p.Addf(flag, "key pair %s holds more than one line; Harvester validates only the first, so give each key its own key pair", ref)
	default:
		return key
	}
	return ""
}

// checkImage says why an image cannot be a VM's disk, or returns nil. The node driver boots cloud images only:
// an ISO needs an interactive installation, which a machine that must come up unattended cannot have.
func checkImage(img *kube.VirtualMachineImage) error {
	ref := img.Namespace + "/" + img.Name
	if isISO(img) {
		return fmt.Errorf("image %s (%q) is an ISO image; the Harvester node driver boots cloud images only (qcow2 or raw with cloud-init), "+
			"because an ISO needs an interactive installation. Upload your distribution's cloud image to Harvester and use that", ref, img.Spec.DisplayName)
	}
	if c := kube.FindCondition(img.Status.Conditions, kube.ConditionRetryLimitExceeded); c != nil && c.Status == corev1.ConditionTrue {
		return fmt.Errorf("image %s failed to import (%s); re-create it in Harvester", ref, strings.Trim(c.Reason+": "+c.Message, ": "))
	}
	imported := kube.FindCondition(img.Status.Conditions, kube.ConditionImported)
	if imported == nil || imported.Status != corev1.ConditionTrue {
		return fmt.Errorf("image %s is not ready: it is still being imported (progress %d%%); wait until Harvester shows it Active", ref, img.Status.Progress)
	}
	if img.Status.StorageClassName == "" {
		return fmt.Errorf("image %s has no storage class yet (status.storageClassName is empty); wait until Harvester shows it Active", ref)
	}
	return nil
}

// isISO reports whether an image is an installer ISO: by the image-type label Harvester's UI sets, else by the
// file it was made from — the path of its URL, its display name, or the uploaded file's name.
func isISO(img *kube.VirtualMachineImage) bool {
	if t, ok := img.Labels[kube.LabelImageType]; ok {
		return strings.EqualFold(t, "iso")
	}
	names := []string{img.Spec.DisplayName, img.Annotations[kube.AnnotationUploadedImageName]}
	for _, raw := range []string{img.Spec.URL, img.Status.AppliedURL} {
		if u, err := url.Parse(strings.TrimSpace(raw)); err == nil {
			names = append(names, u.Path) // a query string (a signed download link) does not hide the file type
		}
	}
	for _, name := range names {
		if strings.HasSuffix(strings.ToLower(strings.TrimSpace(name)), ".iso") {
			return true
		}
	}
	return false
}

// describeLookupError words a failed read of a named object: absent, or the API failure as it is.
func describeLookupError(c kube.Interface, kind string, ref config.Ref, err error) error {
	if kube.IsMissing(err, ref.Name) {
		return fmt.Errorf("%s %s does not exist", kind, ref)
	}
	return c.Explain("read "+kind, ref.String(), err)
}

// checkStorageClasses makes sure the storage class of every volume of the VM exists. Users who may not read
// storage classes (they are cluster-scoped) are not blocked: Harvester will tell at create time. The images'
// classes are known once their lookup ends; the storage classes are listed at once, not read one by one once the
// images name theirs: one request either way, and the pre-flight does not wait for two reads in a row. A
// credential that may not list them reads each by name.
func checkStorageClasses(ctx context.Context, r *run) {
	listed := listStorageClasses(ctx, r.c)
	seen := map[string]bool{}
	for _, claim := range r.machine().Claims {
		disk := claim.Disk
		if !claim.ClassKnown {
			if !seen["image "+disk.Image.String()] {
				seen["image "+disk.Image.String()] = true
				r.u.addf("%s: the storage class of image %s is not known, the image could not be used", disk.Name, disk.Image)
			}
			continue
		}
		class := claim.Class()
		if class == "" || seen[class] {
			continue
		}
		seen[class] = true
		if listed != nil {
			if !listed[class] {
				r.p.Addf(disk.Flag, "%s: storage class %s does not exist in Harvester", disk.Name, class)
			}
			continue
		}
		_, err := kube.GetCached(ctx, r.c, kube.StorageClasses, "", class)
		switch {
		case err == nil:
		case kube.IsGone(err, "storageclasses", class):
			r.p.Addf(disk.Flag, "%s: storage class %s does not exist in Harvester", disk.Name, class)
		case apierrors.IsForbidden(err):
			r.u.addf("the credential may not get storageclasses: cannot tell whether storage class %s exists", class)
		default:
			r.p.Addf(disk.Flag, "%v", r.c.Explain("read storage class", class, err))
		}
	}
}

// listStorageClasses lists every storage class, or returns nil when it cannot.
func listStorageClasses(ctx context.Context, c kube.Interface) map[string]bool {
	list, err := kube.List(ctx, c, kube.StorageClasses, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	if err != nil {
		logging.Debugf("Cannot list storage classes (%s); reading each by name", errWording(err))
		return nil
	}
	classes := map[string]bool{}
	for _, sc := range list {
		classes[sc.Name] = true
	}
	return classes
}
