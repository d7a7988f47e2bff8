package harvester

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// lookups are the facts a create needs from the cluster, found once (by PreCreateCheck) and reused by Create.
type lookups struct {
	facts      objects.Facts
	keyPairKey string   // public key of --harvester-key-pair-name, "" without one
	extraKeys  []string // public keys of --harvester-ssh-keypairs, in the flag's order
}

// lookUp returns the lookups PreCreateCheck found, or looks them up (lookUpImages).
func (d *Driver) lookUp(ctx context.Context, c kube.Interface) (*lookups, error) {
	if d.looked == nil {
		looked, err := lookUpImages(ctx, c, d.cfg)
		if err != nil {
			return nil, err
		}
		d.looked = looked
	}
	return d.looked, nil
}

// imageAccess is what lookUpImages needs to read an image, in the image's namespace: a refused read is the
// create's problem (describeLookupError), so the access review (neededAccess) does not ask for it.
var imageAccess = []kube.Access{{Group: kube.HarvesterGroupVersion.Group, Resource: "virtualmachineimages", Verb: "get"}}

// keyPairAccess is what readKeyPair needs, in the key pair's namespace; a refused read is the create's problem.
var keyPairAccess = []kube.Access{{Group: kube.HarvesterGroupVersion.Group, Resource: "keypairs", Verb: "get"}}

// lookUpImages reads every image and the key pairs the configuration names and checks they can be used. Every
// problem is collected; API errors other than "does not exist" are reported as such.
func lookUpImages(ctx context.Context, c kube.Interface, cfg *config.Config) (*lookups, error) {
	var p config.Problems
	l := &lookups{facts: objects.Facts{ImageStorageClasses: map[config.Ref]string{}}}
	for _, disk := range cfg.Disks {
		if disk.Image == nil {
			continue
		}
		if _, done := l.facts.ImageStorageClasses[*disk.Image]; done {
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
		l.facts.ImageStorageClasses[*disk.Image] = img.Status.StorageClassName
	}
	if ref := cfg.SSH.KeyPair; ref != nil {
		l.keyPairKey = readKeyPair(ctx, c, &p, config.FlagKeyPairName, *ref)
	}
	for _, ref := range cfg.SSH.ExtraKeyPairs {
		if key := readKeyPair(ctx, c, &p, config.FlagSSHKeyPairs, ref); key != "" {
			l.extraKeys = append(l.extraKeys, key)
		}
	}
	if err := p.ErrTitled("cannot create the machine on Harvester"); err != nil {
		return nil, err
	}
	return l, nil
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
