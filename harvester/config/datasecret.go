package config

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// SecretKeyRef names the Secret in the VM namespace whose key holds the user data or the network-config
// (--harvester-user-data-secret, --harvester-network-data-secret): NAME or NAME:KEY. Only the VM namespace, as
// KubeVirt reads a VM's cloud-init Secret (its secretRef is a LocalObjectReference): the driver moves no data
// from a namespace to another.
type SecretKeyRef struct {
	Namespace, Name string
	// Key is the key given, or in a create's copy of the Config (WithSecretData) the key read; "" reads the first
	// of the usual keys the Secret has (Keys).
	Key string
	// Flag is the flag that names the Secret: what its reading finds is filed under it.
	Flag string
}

// defaultSecretKeys are the keys a data Secret is read from when none is given, in order: KubeVirt's, which
// reads a cloud-init Secret's "userdata", else "userData", and "networkdata", else "networkData"
// (kubevirt/kubevirt v1.9.0 pkg/cloud-init/cloud-init.go, readCloudInitNoCloudSource). Harvester's UI and
// terraform-provider-harvester write the first of each (internal/provider/cloudinitsecret,
// Constructor.Setup), as the driver's own cloud-init Secret does.
var defaultSecretKeys = map[string][]string{
	FlagUserDataSecret:    {"userdata", "userData"},
	FlagNetworkDataSecret: {"networkdata", "networkData"},
}

// Keys are the keys the data is read from, in order: the given key, or the usual ones.
func (r SecretKeyRef) Keys() []string {
	if r.Key != "" {
		return []string{r.Key}
	}
	return defaultSecretKeys[r.Flag]
}

// String is how messages name it: "Secret ns/name", with ", key K" once a key is known.
func (r SecretKeyRef) String() string {
	s := "Secret " + r.Namespace + "/" + r.Name
	if r.Key != "" {
		s += ", key " + r.Key
	}
	return s
}

// maxSecretKeyRef is the longest NAME:KEY: a Secret's name and a key are each at most 253 characters.
const maxSecretKeyRef = 2*validation.DNS1123SubdomainMaxLength + 1

// parseSecretKeyRef reads a data Secret flag's value: nil for none, or on a problem (recorded under flag).
func parseSecretKeyRef(p *Problems, flag, value, namespace string) *SecretKeyRef {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	form := "a Secret in the VM namespace " + namespace + " as NAME or NAME:KEY"
	if strings.ContainsAny(value, "\r\n") || len(value) > maxSecretKeyRef {
		// Most likely the data itself, pasted into the wrong field: never quoted, it may hold a secret.
		p.Addf(flag, "must name %s (at most %d characters on one line), got a value of %d characters, not shown; "+
			"put the data into the Secret, and its name here", form, maxSecretKeyRef, len(value))
		return nil
	}
	name, key, hasKey := strings.Cut(value, ":")
	if strings.Contains(name, "/") {
		p.Addf(flag, "must name %s, got %q: a Secret of another namespace is not read (KubeVirt too reads a VM's cloud-init Secret from the VM's namespace only); "+
			"keep it in the VM namespace (--%s)", form, value, FlagVMNamespace)
		return nil
	}
	ok := true
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		p.Addf(flag, "must name %s, got %q: NAME must be a Secret's name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253)",
			form, value)
		ok = false
	}
	if hasKey && len(validation.IsConfigMapKey(key)) > 0 {
		p.Addf(flag, "must name %s, got %q: KEY must be a Secret's key (letters, digits, '-', '_' and '.', at most 253; not . nor starting with ..)", form, value)
		ok = false
	}
	if !ok {
		return nil
	}
	return &SecretKeyRef{Namespace: namespace, Name: name, Key: key, Flag: flag}
}

// SecretValue is what a data Secret's key held, as a create read it.
type SecretValue struct {
	Key  string // the key read
	Data []byte
}

// Size is how large the value is, as messages say it: "1.2 KiB".
func (v *SecretValue) Size() string { return bounded.FormatSize(int64(len(v.Data))) }

// CheckSecretData records under ref's flag what is wrong with data, the value of ref's key (ref names the key
// read), that the inline flags' parse would refuse: it holds something, within userdata.MaxSize (the most the
// cloud-init Secret holds, and the inline documents once decoded), and it is text — the user data may also be
// gzip, which cloud-init inflates (what it inflates to is bounded where cloudinit reads it); the network-config
// is checked as --harvester-network-data is. The value is taken as it is, as KubeVirt hands a cloud-init
// Secret's value to the guest: the API has decoded the Secret's base64 already, and a value base64-encoded once
// more would be a mistake (the user data's then fails as not a format cloud-init reads). What cloud-init makes
// of the user data with the other parts is objects.CheckUserData's to check. No message quotes the value.
func CheckSecretData(p *Problems, ref *SecretKeyRef, data []byte) {
	user := ref.Flag == FlagUserDataSecret
	switch err := userdata.NewBudget(userdata.MaxSize).Spend(int64(len(data)), "is"); {
	case err != nil:
		p.Addf(ref.Flag, "%s: %v", ref, err)
	case len(bytes.TrimSpace(data)) == 0:
		p.Addf(ref.Flag, "%s is empty; put the data there, or leave the flag empty", ref)
	case user && userdata.IsGzip(data):
	case !utf8.Valid(data):
		what := "the text of a network-config (YAML or JSON)"
		if user {
			what = "user data as cloud-init reads it: text (cloud-config, a script, MIME multipart) or gzip of it"
		}
		p.Addf(ref.Flag, "%s holds binary data, not %s", ref, what)
	case !user:
		if err := networkconfig.Validate(data); err != nil {
			p.Addf(ref.Flag, "%s: %v", ref, err)
		}
	}
}

// WithSecretData returns a copy of cfg whose user data and network data are the values read from the Secrets
// of UserDataSecret and NetworkDataSecret (nil for a Secret not given), their references naming the key read.
// The copy shares the rest with cfg.
func (c *Config) WithSecretData(user, network *SecretValue) *Config {
	out := *c
	if user != nil && c.UserDataSecret != nil {
		ref := *c.UserDataSecret
		ref.Key, out.UserDataSecret, out.UserData = user.Key, &ref, user.Data
	}
	if network != nil && c.NetworkDataSecret != nil {
		ref := *c.NetworkDataSecret
		ref.Key, out.NetworkDataSecret, out.NetworkData = network.Key, &ref, network.Data
	}
	return &out
}

// UserDataFlag is the flag the user data comes from: --harvester-user-data-secret when a Secret holds it.
func (c *Config) UserDataFlag() string {
	if c.UserDataSecret != nil {
		return FlagUserDataSecret
	}
	return FlagUserData
}
