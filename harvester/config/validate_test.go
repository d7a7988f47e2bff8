package config_test

import (
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// problemLines are the problems of ParseConfig's error, one a line, as users read them.
func problemLines(t *testing.T, opts Options) []string {
	t.Helper()
	_, err := ParseConfig("m1", opts)
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
