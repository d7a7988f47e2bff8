package config_test

import (
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// problemLines are the problems of ParseConfig's error, one a line, as users read them.
func problemLines(t *testing.T, opts Options, replace ...Rule) []string {
	t.Helper()
	_, err := ParseConfig("m1", opts, replace...)
	if err == nil {
		t.Fatal("the configuration is accepted")
	}
	_, list, _ := strings.Cut(err.Error(), ":\n  ")
	return strings.Split(list, "\n  ")
}

// The rules run once every group is parsed, yet their problems are told beside the flags they are about: after
// their group's, before the next group's.
func TestRuleProblemsFollowTheirGroup(t *testing.T) {
	got := problemLines(t, configtest.With(configtest.MinimalOptions(),
		FlagReservedMemorySize, 4096, // a rule after the size group
		FlagCPUModel, "bad model!", // the cpu group
		FlagIsolateEmulatorThread, true, // a rule after the cpu group
		FlagOS, "bsd")) // the last groups
	want := []string{
		"--harvester-reserved-memory-size: 4096 MiB must be less than the VM memory (4 GiB = 4096 MiB)",
		`--harvester-cpu-model: must be a CPU model name of letters, digits, '-', '_' and '.' (e.g. host-passthrough, Skylake-Server), got "bad model!"`,
		"--harvester-isolate-emulator-thread: needs --harvester-cpu-pinning: KubeVirt isolates the emulator thread only for VMs with dedicated CPUs",
		`--harvester-os: must be linux, the only guest operating system the driver builds for (cloud-init), got "bsd"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A rule given to ParseConfig takes the place of config's rule of its name: it is applied instead, and its
// problems are told where that rule's are.
func TestParseConfigReplacesARule(t *testing.T) {
	var checked *Config
	builder := Rule{Name: RuleUserData, Check: func(p *Problems, cfg *Config) {
		checked = cfg
		p.Addf(FlagUserData, "refused by the builder")
	}}
	got := problemLines(t, configtest.With(configtest.MinimalOptions(),
		FlagUserData, "#cloud-config\nruncmd: [a\n", // config's own rule would refuse it as YAML
		FlagCloudProviderServer, "https://192.0.2.10:6443", // a rule of the cloud provider, before
		FlagIPPool, "x"), builder) // the IP pool's group, after
	if len(got) != 3 || got[0] != "--harvester-cloud-provider-server: is only used with --harvester-generate-cloud-provider-config" ||
		got[1] != "--harvester-user-data: refused by the builder" || !strings.HasPrefix(got[2], "--harvester-ip-pool: must be") {
		t.Errorf("problems:\n%s", strings.Join(got, "\n"))
	}
	if checked == nil || string(checked.UserData) != "#cloud-config\nruncmd: [a\n" {
		t.Errorf("the replacing rule saw %+v", checked)
	}
}

func TestParseConfigRefusesToReplaceAMissingRule(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a rule of no config rule's name is accepted")
		}
	}()
	ParseConfig("m1", configtest.MinimalOptions(), Rule{Name: "no such rule", Check: func(*Problems, *Config) {}})
}

// A rule is replaced by its name: no two have one.
func TestRuleNamesAreUnique(t *testing.T) {
	names := map[string]bool{}
	for _, r := range Rules() {
		if names[r.Name] {
			t.Errorf("two rules are named %q", r.Name)
		}
		names[r.Name] = true
	}
}
