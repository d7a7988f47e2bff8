package config_test

import (
	"encoding/base64"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// parseProblems parses opts for machine m1 and returns the problems' text, "" when it parses.
func parseProblems(t *testing.T, opts Options) (*Config, string) {
	t.Helper()
	cfg, err := ParseConfig("m1", opts)
	if err == nil {
		return cfg, ""
	}
	var cerr *ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a ConfigError, got %v", err)
	}
	return nil, err.Error()
}

func TestParseHostDevices(t *testing.T) {
	doc := `{"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10","tag":"compute"},{"name":"usb-key","deviceName":"kubevirt.io/node1-0951-1666-001002"}]}`
	want := []HostDevice{{Name: "gpu1", DeviceName: "nvidia.com/GA102GL_A10", Tag: "compute"}, {Name: "usb-key", DeviceName: "kubevirt.io/node1-0951-1666-001002"}}
	for _, raw := range []string{doc, base64.StdEncoding.EncodeToString([]byte(doc))} {
		cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagHostDeviceInfo, raw))
		if problems != "" {
			t.Fatal(problems)
		}
		if !reflect.DeepEqual(cfg.HostDevices, want) {
			t.Errorf("host devices %+v, want %+v", cfg.HostDevices, want)
		}
	}
	// Forms send an empty list when nothing is picked.
	if cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagHostDeviceInfo, `{"hostDevices":[]}`)); problems != "" || len(cfg.HostDevices) != 0 {
		t.Errorf("an empty list: %q %+v", problems, cfg)
	}
}

func TestParseHostDevicesRejects(t *testing.T) {
	tests := []struct {
		name, raw, vgpus string
		want             []string
	}{
		{name: "unknown field", raw: `{"hostDevices":[{"name":"gpu1","device":"nvidia.com/A"}]}`,
			want: []string{`--harvester-host-device-info: has an unknown field "device"; want {"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10"}]}`}},
		{name: "not JSON", raw: `hostDevices: [gpu1]`, want: []string{"--harvester-host-device-info: is not valid JSON"}},
		{name: "wrong shape", raw: `{"hostDevices":{"name":"gpu1"}}`, want: []string{"--harvester-host-device-info: hostDevices must be a JSON list"}},
		{name: "bad name and missing device", raw: `{"hostDevices":[{"name":"GPU_1"}]}`,
			want: []string{`hostDevices[0].name must be a lowercase name of letters, digits and '-' (at most 63), got "GPU_1"`,
				"hostDevices[0].deviceName is required: the device's resource name in Harvester"}},
		{name: "duplicate name", raw: `{"hostDevices":[{"name":"d","deviceName":"intel.com/X710"},{"name":"d","deviceName":"intel.com/X710"}]}`,
			want: []string{`hostDevices[1].name "d" is used twice`}},
		{name: "vGPU name", raw: `{"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10"}]}`,
			vgpus: `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`,
			want:  []string{`--harvester-host-device-info: hostDevices[0].name "gpu1" is also a vGPU's name in --harvester-vgpu-info`}},
		{name: "tag", raw: `{"hostDevices":[{"name":"a","deviceName":"intel.com/X710","tag":"two words"},{"name":"b","deviceName":"intel.com/X710","tag":"` + strings.Repeat("t", 64) + `"}]}`,
			want: []string{`hostDevices[0].tag must be printable ASCII without spaces (a role name like gpu-compute), got "two words"`,
				"hostDevices[1].tag must be at most 63 characters, got 64"}},
		// KubeVirt's DRA fields are HostDevice fields, so not unknown, but Harvester cannot serve them.
		{name: "DRA claim", raw: `{"hostDevices":[{"name":"a","claimName":"gpus","requestName":"gpu"}]}`,
			want: []string{"hostDevices[0].claimName is not supported: it names a DRA resource claim, which needs KubeVirt's HostDevicesWithDRA feature gate (off in Harvester)",
				"hostDevices[0].requestName is not supported"}},
		{name: "not a resource name", raw: `{"hostDevices":[{"name":"a","deviceName":"GA102GL_A10"},{"name":"b","deviceName":"nvidia.com/GA 102"}]}`,
			want: []string{`hostDevices[0].deviceName must be a resource name like nvidia.com/GA102GL_A10 (a vendor domain, '/', a name), got "GA102GL_A10"`,
				`hostDevices[1].deviceName must be a resource name like nvidia.com/GA102GL_A10 (a vendor domain, '/', a name), got "nvidia.com/GA 102"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagHostDeviceInfo, tt.raw, FlagVGPUInfo, tt.vgpus))
			configtest.WantAll(t, problems, tt.want...)
		})
	}
}

// rancherTwoVGPUs is what Rancher's Harvester form writes for two vGPUs (rancher/dashboard
// pkg/harvester-manager/machine-config/harvester.vue, updateVGpu: JSON.stringify of requests all named by the
// placeholder "provisioned").
const rancherTwoVGPUs = `{"vGPURequests":[{"name":"provisioned","deviceName":"nvidia.com/NVIDIA_A2-2Q"},{"name":"provisioned","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`

// Rancher's placeholder names are numbered so that every device name is unique, skipping the names the user gave
// other vGPUs and host devices; any other name given twice is refused.
func TestParseVGPUNames(t *testing.T) {
	tests := []struct {
		name, vgpus, hostDevices string
		want                     []string
	}{
		{name: "Rancher's form, two vGPUs", vgpus: rancherTwoVGPUs, want: []string{"provisioned", "provisioned-1"}},
		{name: "Rancher's form, one vGPU", vgpus: `{"vGPURequests":[{"name":"provisioned","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`, want: []string{"provisioned"}},
		{name: "around named vGPUs", vgpus: `{"vGPURequests":[{"name":"provisioned","deviceName":"nvidia.com/A"},{"name":"provisioned-1","deviceName":"nvidia.com/A"},{"name":"provisioned","deviceName":"nvidia.com/A"}]}`,
			want: []string{"provisioned", "provisioned-1", "provisioned-2"}},
		{name: "around host devices", vgpus: rancherTwoVGPUs, hostDevices: `{"hostDevices":[{"name":"provisioned","deviceName":"intel.com/X710"},{"name":"provisioned-2","deviceName":"intel.com/X710"}]}`,
			want: []string{"provisioned-1", "provisioned-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVGPUInfo, tt.vgpus, FlagHostDeviceInfo, tt.hostDevices))
			if problems != "" {
				t.Fatal(problems)
			}
			var got []string
			for _, g := range cfg.VGPUs {
				got = append(got, g.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("vGPU names %v, want %v", got, tt.want)
			}
		})
	}
	_, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVGPUInfo,
		`{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/A"},{"name":"gpu2","deviceName":"nvidia.com/A"},{"name":"gpu1","deviceName":"nvidia.com/B"}]}`))
	configtest.WantAll(t, problems, `--harvester-vgpu-info: vGPURequests[2].name "gpu1" is also vGPURequests[0]'s; every vGPU needs its own name`)
}

func TestParseVMLabels(t *testing.T) {
	cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVMLabels, " team=ml , example.com/tier=gold,empty=,"))
	if problems != "" {
		t.Fatal(problems)
	}
	if want := map[string]string{"team": "ml", "example.com/tier": "gold", "empty": ""}; !reflect.DeepEqual(cfg.Labels, want) {
		t.Errorf("labels %v, want %v", cfg.Labels, want)
	}
	// Without --harvester-maintenance-strategy the label may be given here, with one of Harvester's values.
	cfg, problems = parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVMLabels, LabelMaintainModeStrategy+"=Shutdown"))
	if problems != "" || cfg.Labels[LabelMaintainModeStrategy] != "Shutdown" {
		t.Errorf("maintenance label: %q %v", problems, cfg)
	}
}

func TestParseVMLabelsRejects(t *testing.T) {
	tests := []struct {
		name, raw, strategy string
		want                []string
	}{
		{name: "no equals sign", raw: "team", want: []string{`--harvester-vm-labels: "team" is not key=value; want key=value,key=value`}},
		{name: "bad key", raw: "-team=ml,a/b/c=1", want: []string{`"-team" is not a Kubernetes label key`, `"a/b/c" is not a Kubernetes label key`}},
		{name: "bad value", raw: "team=m l", want: []string{`label team: "m l" is not a Kubernetes label value`}},
		{name: "value too long", raw: "team=" + strings.Repeat("x", 64), want: []string{"must be no more than 63 bytes"}},
		{name: "duplicate", raw: "team=ml,team=ai", want: []string{"label team is given twice"}},
		{name: "driver's labels", raw: LabelCreator + "=me," + LabelVMName + "=x," + LabelMachineSetName + "=x," + LabelGuestCluster + "=x," + LabelNodePool + "=x",
			want: []string{"label harvesterhci.io/creator is set by the driver", "label harvesterhci.io/vmName is set by the driver",
				"label harvesterhci.io/machineSetName is set by the driver", "label guestcluster.harvesterhci.io/name is set by the driver",
				"label nodepool.harvesterhci.io/name is set by the driver"}},
		{name: "maintenance label beside its flag", raw: LabelMaintainModeStrategy + "=Migrate", strategy: "Shutdown",
			want: []string{"--harvester-vm-labels: label harvesterhci.io/maintain-mode-strategy is set by --harvester-maintenance-strategy"}},
		{name: "maintenance label value", raw: LabelMaintainModeStrategy + "=Reboot",
			want: []string{`label harvesterhci.io/maintain-mode-strategy must be one of Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable or Shutdown (Harvester refuses other values), got "Reboot"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagVMLabels, tt.raw, FlagMaintenanceStrategy, tt.strategy))
			configtest.WantAll(t, problems, tt.want...)
		})
	}
}

func TestParseStrategies(t *testing.T) {
	cfg, problems := parseProblems(t, configtest.MinimalOptions())
	if problems != "" || cfg.EvictionStrategy != kubevirtv1.EvictionStrategyLiveMigrateIfPossible || cfg.MaintenanceStrategy != "" {
		t.Fatalf("defaults: %q %+v", problems, cfg)
	}
	// Rancher sends "" for a cleared field: the default again.
	if cfg, _ := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagEvictionStrategy, "")); cfg == nil || cfg.EvictionStrategy != kubevirtv1.EvictionStrategyLiveMigrateIfPossible {
		t.Errorf("empty eviction strategy: %+v", cfg)
	}
	for _, e := range EvictionStrategies {
		for _, m := range MaintenanceStrategies {
			cfg, problems := parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagEvictionStrategy, string(e), FlagMaintenanceStrategy, m))
			if problems != "" || cfg.EvictionStrategy != e || cfg.MaintenanceStrategy != m {
				t.Errorf("%s/%s: %q %+v", e, m, problems, cfg)
			}
		}
	}
	_, problems = parseProblems(t, configtest.With(configtest.MinimalOptions(), FlagEvictionStrategy, "liveMigrate", FlagMaintenanceStrategy, "migrate"))
	configtest.WantAll(t, problems,
		`--harvester-eviction-strategy: must be one of LiveMigrateIfPossible, LiveMigrate, None or External (KubeVirt's eviction strategies), got "liveMigrate"`,
		`--harvester-maintenance-strategy: must be one of Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable or Shutdown (Harvester's maintenance-mode strategies), got "migrate"`)
}

// The maintenance strategies and their label are Harvester's: read from the source of the harvester module go.mod
// pins (pkg/util/constants.go; the package itself needs modules the driver does not). KubeVirt's eviction
// strategies are its exported constants, so the compiler checks them.
func TestMaintenanceStrategiesAreHarvesters(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/harvester/harvester").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go list -m github.com/harvester/harvester: %v (is the module in the module cache? go mod download)", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "pkg", "util", "constants.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]ast.Expr{}
	var values []ast.Expr
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok || len(vs.Values) != len(vs.Names) {
				continue
			}
			for i, n := range vs.Names {
				consts[n.Name] = vs.Values[i]
				if lit, ok := vs.Values[i].(*ast.CompositeLit); ok && n.Name == "MaintenanceModeStrategyValidValues" {
					values = lit.Elts
				}
			}
		}
	}
	var eval func(ast.Expr) string
	eval = func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			s, _ := strconv.Unquote(e.Value)
			return s
		case *ast.Ident:
			return eval(consts[e.Name])
		case *ast.BinaryExpr:
			return eval(e.X) + eval(e.Y)
		}
		t.Fatalf("%s: cannot evaluate %T", file, e)
		return ""
	}
	var theirs []string
	for _, v := range values {
		theirs = append(theirs, eval(v))
	}
	if !reflect.DeepEqual(theirs, MaintenanceStrategies) {
		t.Errorf("Harvester's maintenance strategies are %v, the driver's %v", theirs, MaintenanceStrategies)
	}
	if label := eval(consts["LabelMaintainModeStrategy"]); label != LabelMaintainModeStrategy {
		t.Errorf("Harvester's label is %q, the driver's %q", label, LabelMaintainModeStrategy)
	}
}
