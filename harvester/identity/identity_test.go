package identity

import (
	"errors"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/drivers"
	"github.com/rancher/machine/libmachine/mcnflag"
)

var testFlags = []string{"harvester-ip-pool", "harvester-ip-pool-dns", "harvester-kubeconfig-content", "harvester-cpu-count"}

func TestFromExecutable(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		renamed    bool
	}{
		{"/usr/local/bin/docker-machine-driver-harvester", "harvester", false},
		{"docker-machine-driver-hcivm", "hcivm", true},
		{"/opt/drivers/management-state/bin/docker-machine-driver-hcivm", "hcivm", true},
		{"./docker-machine-driver-other", "other", true},
		// Digits after the first letter: both of Rancher's cuts keep them.
		{"docker-machine-driver-harvester2", "harvester2", true},
		{"docker-machine-driver-hci2vm", "hci2vm", true},
		// Not a plugin's file name: the canonical driver (go run, test binaries).
		{"/tmp/go-build123/b001/harvester.test", "harvester", false},
		{"rancher-machine", "harvester", false},
	} {
		id, err := FromExecutable(tc.path, testFlags)
		if err != nil || id.Name() != tc.want || id.Renamed() != tc.renamed {
			t.Errorf("FromExecutable(%q) = %q (renamed %v), %v; want %q (renamed %v)", tc.path, id.Name(), id.Renamed(), err, tc.want, tc.renamed)
		}
	}
}

// A plugin file name whose suffix Rancher would not carry intact is refused, never taken for the canonical
// driver: rancher-machine would save its machines under a name no binary answers to.
func TestFromExecutableRefusesAnyOtherSuffix(t *testing.T) {
	for suffix, why := range map[string]string{
		"":                                   "empty",
		"HARV":                               "capitals",
		"Hcivm":                              "capitals",
		"harv.x":                             "'-', '_' or '.'",
		"hci-vm":                             "'-', '_' or '.'",
		"hci_vm":                             "'-', '_' or '.'",
		"harvester.test":                     "'-', '_' or '.'",
		"härv":                               "other than lowercase ASCII",
		"harv\u200b":                         "other than lowercase ASCII",
		"harv x":                             "other than lowercase ASCII",
		"2harv":                              "starts with a digit",
		"myuserdata":                         "userdata",
		strings.Repeat("a", MaxNameLength+1): "more than the 44",
	} {
		path := "/opt/bin/" + BinaryPrefix + suffix
		id, err := FromExecutable(path, testFlags)
		if err == nil {
			t.Errorf("FromExecutable(%q) = %q, want it refused", path, id.Name())
			continue
		}
		msg := err.Error()
		for _, want := range []string{why, NameRule, strconv.Quote(BinaryPrefix + suffix), "Install it as docker-machine-driver-harvester"} {
			if !strings.Contains(msg, want) {
				t.Errorf("FromExecutable(%q): the error does not say %q: %s", path, want, msg)
			}
		}
	}
}

func TestValidNameKeepsWhatRancherKeeps(t *testing.T) {
	for _, name := range []string{Release, "hcivm", "a", "h2", "harvester2", "abc123def", strings.Repeat("a", MaxNameLength)} {
		if err := ValidName(name); err != nil {
			t.Errorf("ValidName(%q): %v", name, err)
		}
		// Rancher's download cut (download_driver.sh, base_driver.go copyBinary) and the driver part of its
		// flag-to-field rule (ToLowerCamelCase) keep the name whole; the kind it makes comes back as the name
		// (getNodeDriverName lowercases <Name>Machine less "Machine").
		if cut := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }); len(cut) != 1 || cut[0] != name {
			t.Errorf("%q is cut by the download script into %q", name, cut)
		}
		if driver, _, _ := strings.Cut(name+"-cpu-count", "-"); driver != name {
			t.Errorf("%q loses its end in the flag-to-field rule: %q", name, driver)
		}
		kind := strings.ToUpper(name[:1]) + name[1:] + "Machine"
		if back := strings.ToLower(strings.TrimSuffix(kind, "Machine")); back != name {
			t.Errorf("the kind %s comes back as driver %q", kind, back)
		}
		if l := len(strings.ToLower(kind + "TemplateList")); l > 63 {
			t.Errorf("%q: the list kind of its machine template has %d characters, over a DNS-1035 label's 63", name, l)
		}
	}
	if err := ValidName(Canonical); err != nil {
		t.Errorf("the canonical name breaks the rule: %v", err)
	}
}

func TestNewRefusesInvalidNames(t *testing.T) {
	for _, name := range []string{"", "2hci", "hci-vm", "hci_vm", "hci.vm", "HCIVM", "userdata", "xuserdatax", "hcí"} {
		if _, err := New(name, testFlags); err == nil || !strings.Contains(err.Error(), NameRule) {
			t.Errorf("New(%q) accepted the name or did not give the rule: %v", name, err)
		}
	}
	if err := ValidName(Release); err != nil {
		t.Errorf("the release's second name %q: %v", Release, err)
	}
	if id, err := New(Canonical, testFlags); err != nil || id.Renamed() {
		t.Errorf("New(%q) = %+v, %v; want the canonical identity", Canonical, id, err)
	}
}

func TestNamesOfARenamedIdentity(t *testing.T) {
	id, err := New("hcivm", testFlags)
	if err != nil {
		t.Fatal(err)
	}
	if got := id.Flag("harvester-ip-pool-dns"); got != "hcivm-ip-pool-dns" {
		t.Errorf("Flag = %q", got)
	}
	if got := id.EnvVar("harvester-kubeconfig-content"); got != "HCIVM_KUBECONFIG_CONTENT" {
		t.Errorf("EnvVar = %q", got)
	}
	canonical := Identity{}
	if canonical.Flag("harvester-cpu-count") != "harvester-cpu-count" || canonical.EnvVar("harvester-cpu-count") != "HARVESTER_CPU_COUNT" {
		t.Errorf("the canonical identity renames: %q, %q", canonical.Flag("harvester-cpu-count"), canonical.EnvVar("harvester-cpu-count"))
	}
}

func TestTextRewritesOnlyWholeKnownNames(t *testing.T) {
	id, _ := New("hcivm", testFlags)
	in := "--harvester-ip-pool-dns: needs --harvester-ip-pool; set $HARVESTER_KUBECONFIG_CONTENT or --harvester-kubeconfig-content; " +
		"label harvesterhci.io/creator: docker-machine-driver-harvester; --harvester-unknown-flag stays"
	want := "--hcivm-ip-pool-dns: needs --hcivm-ip-pool; set $HCIVM_KUBECONFIG_CONTENT or --hcivm-kubeconfig-content; " +
		"label harvesterhci.io/creator: docker-machine-driver-harvester; --harvester-unknown-flag stays"
	if got := id.Text(in); got != want {
		t.Errorf("Text:\n got %s\nwant %s", got, want)
	}
	if got := (Identity{}).Text(in); got != in {
		t.Errorf("the canonical identity rewrote the text: %s", got)
	}
}

func TestErrKeepsTheErrorChain(t *testing.T) {
	id, _ := New("hcivm", testFlags)
	base := &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}
	err := id.Err(wrap("--harvester-cpu-count: bad", base))
	if err.Error() != "--hcivm-cpu-count: bad: open /x: file does not exist" {
		t.Errorf("Err = %q", err)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("the renamed error lost its chain: %v", err)
	}
	plain := errors.New("nothing to rename")
	if id.Err(plain) != plain || (Identity{}).Err(base) != error(base) || id.Err(nil) != nil {
		t.Errorf("Err changed an error it had nothing to rename in")
	}
}

type wrapped struct {
	msg string
	err error
}

func (w wrapped) Error() string { return w.msg + ": " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

func wrap(msg string, err error) error { return wrapped{msg, err} }

func TestFlagsRenamesNamesEnvAndUsage(t *testing.T) {
	flags := []mcnflag.Flag{
		&mcnflag.StringFlag{Name: "harvester-ip-pool", EnvVar: "HARVESTER_IP_POOL", Usage: "Needs --harvester-ip-pool-dns.", Value: "x"},
		&mcnflag.IntFlag{Name: "harvester-cpu-count", EnvVar: "HARVESTER_CPU_COUNT", Usage: "Cores.", Value: 2},
		&mcnflag.BoolFlag{Name: "harvester-ip-pool-dns", EnvVar: "HARVESTER_IP_POOL_DNS", Usage: "B."},
		&mcnflag.StringSliceFlag{Name: "harvester-kubeconfig-content", EnvVar: "HARVESTER_KUBECONFIG_CONTENT", Value: []string{"a"}},
	}
	if got := (Identity{}).Flags(flags); !reflect.DeepEqual(got, flags) {
		t.Errorf("the canonical identity changed the flags")
	}
	id, _ := New("hcivm", testFlags)
	want := []mcnflag.Flag{
		&mcnflag.StringFlag{Name: "hcivm-ip-pool", EnvVar: "HCIVM_IP_POOL", Usage: "Needs --hcivm-ip-pool-dns.", Value: "x"},
		&mcnflag.IntFlag{Name: "hcivm-cpu-count", EnvVar: "HCIVM_CPU_COUNT", Usage: "Cores.", Value: 2},
		&mcnflag.BoolFlag{Name: "hcivm-ip-pool-dns", EnvVar: "HCIVM_IP_POOL_DNS", Usage: "B."},
		&mcnflag.StringSliceFlag{Name: "hcivm-kubeconfig-content", EnvVar: "HCIVM_KUBECONFIG_CONTENT", Value: []string{"a"}},
	}
	if got := id.Flags(flags); !reflect.DeepEqual(got, want) {
		t.Errorf("Flags:\n got %v\nwant %v", got, want)
	}
	if flags[0].String() != "harvester-ip-pool" {
		t.Errorf("Flags changed its input")
	}
}

type mapOptions map[string]any

func (m mapOptions) String(k string) string        { s, _ := m[k].(string); return s }
func (m mapOptions) StringSlice(k string) []string { s, _ := m[k].([]string); return s }
func (m mapOptions) Int(k string) int              { n, _ := m[k].(int); return n }
func (m mapOptions) Bool(k string) bool            { b, _ := m[k].(bool); return b }

func TestOptionsReadTheRenamedFlags(t *testing.T) {
	given := mapOptions{"hcivm-ip-pool": "10.0.0.0/24", "hcivm-cpu-count": 4, "hcivm-ip-pool-dns": true,
		"hcivm-kubeconfig-content": []string{"k"}, "harvester-cpu-count": 8}
	id, _ := New("hcivm", testFlags)
	var opts drivers.DriverOptions = id.Options(given)
	if opts.String("harvester-ip-pool") != "10.0.0.0/24" || opts.Int("harvester-cpu-count") != 4 ||
		!opts.Bool("harvester-ip-pool-dns") || !reflect.DeepEqual(opts.StringSlice("harvester-kubeconfig-content"), []string{"k"}) {
		t.Errorf("renamed options read the wrong keys")
	}
	if (Identity{}).Options(given).Int("harvester-cpu-count") != 8 {
		t.Errorf("the canonical identity's options do not read the canonical keys")
	}
}
