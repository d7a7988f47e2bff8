// Package identity is the name one copy of the plugin answers to. Installed as docker-machine-driver-harvester
// it is the Harvester driver with the harvester- flags; the same binary installed as docker-machine-driver-<name>
// is the driver <name>, with <name>- flags and <NAME>_ environment variables, so a stock Rancher can run it as a
// second node driver beside its built-in harvester. A name Rancher would not carry intact (ValidName) is refused:
// the binary installed under it does not start.
//
// The rest of the driver speaks the canonical names (harvester-…, HARVESTER_…). An Identity translates at the
// edges: the flags rancher-machine and Rancher read, the options rancher-machine hands back, and the text of the
// errors users see. The zero Identity is the canonical one and translates nothing.
package identity

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	// Canonical is the driver's own name: Rancher's built-in node driver and the flag prefix of the flag table.
	Canonical = "harvester"
	// BinaryPrefix starts the file name of every rancher-machine plugin (libmachine/drivers/plugin/localbinary
	// driverPath): the driver <name> is the executable docker-machine-driver-<name>.
	BinaryPrefix = "docker-machine-driver-"
	// Release is the second name the release ships (archives, NodeDriver manifests): a valid name (ValidName),
	// without "harvester" in it (see docs/install-rancher.md, "Why the second name is hcivm").
	Release = "hcivm"
)

// Identity is the driver name a copy of the plugin answers to; the zero value is Canonical.
type Identity struct {
	name string
	// rename rewrites canonical flag and environment variable names into this identity's; nil for Canonical.
	rename *strings.Replacer
}

// FromExecutable is the identity of the plugin run as path (os.Args[0]; rancher-machine starts a plugin by the
// path it found on $PATH, and Rancher by /opt/drivers/management-state/bin/docker-machine-driver-<name>): the
// part of the file name after docker-machine-driver-. A file name without that prefix (go run, a test binary) and
// docker-machine-driver-harvester are Canonical. Any other suffix that is not a valid name (ValidName) is refused:
// such a binary would be a driver Rancher cannot run, or one whose machines rancher-machine saves under a name no
// binary answers to, so it must not start at all. flags are the canonical flag names, which the identity renames.
func FromExecutable(path string, flags []string) (Identity, error) {
	base := filepath.Base(path)
	name, ok := strings.CutPrefix(base, BinaryPrefix)
	if !ok || name == Canonical {
		return Identity{}, nil
	}
	id, err := New(name, flags)
	if err != nil {
		return Identity{}, fmt.Errorf("this executable is %s, which would make it the driver %s: %w. "+
			"Install it as %s%s, or as %s<name> with a name of that form", strconv.Quote(base), strconv.Quote(name), err, BinaryPrefix, Canonical, BinaryPrefix)
	}
	return id, nil
}

// New is the identity name with the canonical flags given (names like harvester-cpu-count). It refuses a name
// ValidName refuses; Canonical gives the zero Identity.
func New(name string, flags []string) (Identity, error) {
	if name == Canonical {
		return Identity{}, nil
	}
	if err := ValidName(name); err != nil {
		return Identity{}, err
	}
	id := Identity{name: name}
	// Longest names first: strings.Replacer tries its pairs in order at each position, and one flag name can
	// start another (harvester-ip-pool, harvester-ip-pool-dns).
	sorted := append([]string(nil), flags...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	pairs := make([]string, 0, 4*len(sorted))
	for _, f := range sorted {
		pairs = append(pairs, "--"+f, "--"+id.Flag(f), canonicalEnv(f), id.EnvVar(f))
	}
	id.rename = strings.NewReplacer(pairs...)
	return id, nil
}

// NameRule is the rule of ValidName in words, for messages and the guides.
const NameRule = "a second driver name is a lowercase ASCII letter followed by lowercase ASCII letters and digits, " +
	"at most 44 characters in all, without \"userdata\""

// MaxNameLength is the longest second name. Rancher makes the kinds <Name>Config, <Name>Machine and
// <Name>MachineTemplate of a node driver's name (rancher/rancher pkg/controllers/capr/dynamicschema/dynamicschema.go:
// addConfigSchema, addMachineSchema, addMachineTemplateSchema, getCRD), and the API server takes a CRD only when each
// kind and its list kind, lowercased, are DNS-1035 labels: at most 63 characters, a letter first
// (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation, ValidateCustomResourceDefinitionNames). The
// longest, <name>machinetemplatelist, has 19 characters besides the name.
const MaxNameLength = 63 - len("machinetemplatelist")

// ValidName reports why name cannot be a second driver name, or nil: it must be what every rule by which Rancher
// carries a node driver's name keeps intact (NameRule).
//
//   - Only letters and digits: Rancher's download script names the installed binary after the downloaded file's
//     name up to its first '-', '_' or '.' (rancher/machine package/download_driver.sh: sed 's/[-_\.].*$//'),
//     and so does Rancher's own download for a bare binary (rancher/rancher
//     pkg/controllers/management/drivers/base_driver.go, copyBinary: strings.FieldsFunc on '-', '_', '.'); its
//     flag-to-field rule takes a flag's driver part up to the first '-' and drops it
//     (pkg/controllers/management/drivers/nodedriver/utils.go, ToLowerCamelCase). Both keep letters and digits.
//   - Lowercase: Rancher turns a machine's kind back into its driver name by lowercasing it
//     (pkg/controllers/capr/machineprovision/args.go, getNodeDriverName), so HCIVM would come back as hcivm.
//   - ASCII, a letter first, at most MaxNameLength: the kinds Rancher makes of the name (MaxNameLength); the
//     environment variables <NAME>_… of the cloud credential (getArgsEnvAndStatus) start with it too. Rancher's
//     camelCase rule, which changed for digits in 2.13 (regExHyphen, rancher/rancher#52145), splits the field
//     names only: toArgs and getArgsEnvAndStatus put the driver name in front as it is.
//   - Not "userdata" inside: rancher-machine takes the first flag whose name contains it as the user-data flag
//     (libmachine/drivers DriverUserdataFlag), and every flag would.
func ValidName(name string) error {
	why := nameProblem(name)
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s: %s", why, NameRule)
}

// nameProblem says what of NameRule name breaks first, or "".
func nameProblem(name string) string {
	q := strconv.Quote(name)
	switch {
	case name == "":
		return "the driver name is empty"
	case strings.ContainsAny(name, "-_."):
		return "the driver name " + q + " holds '-', '_' or '.', where Rancher's download of a driver cuts the name"
	case len(name) > MaxNameLength:
		return fmt.Sprintf("the driver name %s has %d characters, more than the %d Rancher's machine kinds leave", q, len(name), MaxNameLength)
	case strings.ContainsFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' }):
		return "the driver name " + q + " has capitals, which Rancher lowercases"
	case strings.ContainsFunc(name, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }):
		return "the driver name " + q + " holds characters other than lowercase ASCII letters and digits"
	case name[0] >= '0' && name[0] <= '9':
		return "the driver name " + q + " starts with a digit, which no Kubernetes kind or environment variable may"
	case strings.Contains(name, "userdata"):
		return "the driver name " + q + " contains \"userdata\", which would make every flag rancher-machine's user-data flag"
	}
	return ""
}

// Name is the driver name: what DriverName returns and rancher-machine saves with each machine.
func (id Identity) Name() string {
	if id.name == "" {
		return Canonical
	}
	return id.name
}

// Renamed reports whether the identity is not Canonical.
func (id Identity) Renamed() bool { return id.name != "" }

// Flag is the identity's name of a canonical flag: harvester-cpu-count → <name>-cpu-count.
func (id Identity) Flag(canonical string) string {
	if !id.Renamed() {
		return canonical
	}
	if rest, ok := strings.CutPrefix(canonical, Canonical+"-"); ok {
		return id.name + "-" + rest
	}
	return canonical
}

// EnvVar is the identity's environment variable of a canonical flag: HARVESTER_CPU_COUNT for Canonical,
// <NAME>_CPU_COUNT otherwise — the name Rancher gives a cloud credential's field of driver <name>
// (pkg/controllers/capr/machineprovision/args.go getArgsEnvAndStatus).
func (id Identity) EnvVar(canonical string) string {
	suffix := strings.TrimPrefix(canonical, Canonical+"-")
	return strings.ToUpper(id.Name() + "_" + strings.ReplaceAll(suffix, "-", "_"))
}

func canonicalEnv(flag string) string { return Identity{}.EnvVar(flag) }

// Text rewrites the canonical flags (--harvester-…) and environment variables (HARVESTER_…) named in s into
// the identity's. Only the flags the identity was made with are rewritten.
func (id Identity) Text(s string) string {
	if id.rename == nil {
		return s
	}
	return id.rename.Replace(s)
}

// Err is err with its text in the identity's names (see Text); errors.Is and errors.As still see err. nil and
// errors of the Canonical identity are returned as they are.
func (id Identity) Err(err error) error {
	if err == nil || id.rename == nil {
		return err
	}
	msg := id.Text(err.Error())
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg: msg, err: err}
}

type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }
