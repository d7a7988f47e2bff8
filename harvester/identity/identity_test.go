package identity

import (
	"errors"
	"io/fs"
	"reflect"
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
		// Not a valid second name: the canonical driver.
		{"/tmp/go-build123/b001/harvester.test", "harvester", false},
		{"docker-machine-driver-hci2", "harvester", false},
		{"docker-machine-driver-hci-vm", "harvester", false},
		{"docker-machine-driver-Hcivm", "harvester", false},
		{"docker-machine-driver-", "harvester", false},
		{"docker-machine-driver-myuserdata", "harvester", false},
		{"rancher-machine", "harvester", false},
	} {
		id := FromExecutable(tc.path, testFlags)
		if id.Name() != tc.want || id.Renamed() != tc.renamed {
			t.Errorf("FromExecutable(%q) = %q (renamed %v), want %q (renamed %v)", tc.path, id.Name(), id.Renamed(), tc.want, tc.renamed)
		}
	}
}

func TestNewRefusesInvalidNames(t *testing.T) {
	for _, name := range []string{"", "hci2", "hci-vm", "hci_vm", "hci.vm", "HCIVM", "userdata", "xuserdatax"} {
		if _, err := New(name, testFlags); err == nil {
			t.Errorf("New(%q) accepted the name", name)
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
