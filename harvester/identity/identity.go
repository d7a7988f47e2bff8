// Package identity is the name one copy of the plugin answers to. Installed as docker-machine-driver-harvester
// it is the Harvester driver with the harvester- flags; the same binary installed as docker-machine-driver-<name>
// is the driver <name>, with <name>- flags and <NAME>_ environment variables, so a stock Rancher can run it as a
// second node driver beside its built-in harvester.
//
// The rest of the driver speaks the canonical names (harvester-…, HARVESTER_…). An Identity translates at the
// edges: the flags rancher-machine and Rancher read, the options rancher-machine hands back, and the text of the
// errors users see. The zero Identity is the canonical one and translates nothing.
package identity

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
)

const (
	// Canonical is the driver's own name: Rancher's built-in node driver and the flag prefix of the flag table.
	Canonical = "harvester"
	// BinaryPrefix starts the file name of every rancher-machine plugin (libmachine/drivers/plugin/localbinary
	// driverPath): the driver <name> is the executable docker-machine-driver-<name>.
	BinaryPrefix = "docker-machine-driver-"
	// Release is the second name the release ships (archives, NodeDriver manifests). Lowercase letters only, and
	// without "harvester" in it: see ValidName and the README's "A second node driver" section.
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
// part of the file name after docker-machine-driver-. Any file name that does not name a valid second driver —
// the canonical one, a test binary, a name with digits — is Canonical, so a binary under an unusual name keeps
// the driver's own behaviour. flags are the canonical flag names, which the identity renames.
func FromExecutable(path string, flags []string) Identity {
	base := filepath.Base(path)
	name, ok := strings.CutPrefix(base, BinaryPrefix)
	if !ok || name == Canonical || ValidName(name) != nil {
		return Identity{}
	}
	id, _ := New(name, flags)
	return id
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

// ValidName reports why name cannot be a second driver name, or nil. It must be lowercase letters only:
// Rancher's download script cuts a driver's name at the first '-', '_' or '.' (rancher/machine
// package/download_driver.sh), Rancher's schema drops a flag's part up to the first '-' (rancher/rancher
// pkg/controllers/management/drivers/nodedriver/utils.go ToLowerCamelCase), and its kind is lowercased back into
// the driver name (pkg/controllers/capr/machineprovision/args.go getNodeDriverName). It must not contain
// "userdata": rancher-machine takes the first flag whose name contains it as the user-data flag
// (libmachine/drivers DriverUserdataFlag), and every flag would.
func ValidName(name string) error {
	if name == "" {
		return errors.New("the driver name is empty")
	}
	for _, r := range name {
		if r < 'a' || r > 'z' {
			return errors.New("the driver name " + quote(name) + " must be lowercase letters a-z only")
		}
	}
	if strings.Contains(name, "userdata") {
		return errors.New("the driver name " + quote(name) + " contains \"userdata\", which would make every flag rancher-machine's user-data flag")
	}
	return nil
}

func quote(s string) string { return `"` + s + `"` }

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
