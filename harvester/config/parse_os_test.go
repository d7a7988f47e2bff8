package config_test

import (
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func TestParseOS(t *testing.T) {
	for _, tc := range []struct {
		value, problem string
	}{
		{"", ""},
		{"linux", ""},
		{" Linux ", ""},
		{"LINUX", ""},
		{"windows", `--harvester-os: "windows" is not supported: the driver builds cloud-init guests only`},
		{"Windows", `--harvester-os: "Windows" is not supported: the driver builds cloud-init guests only`},
		{"darwin", `--harvester-os: must be linux, the only guest operating system the driver builds for (cloud-init), got "darwin"`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagOS, tc.value))
			switch {
			case tc.problem == "" && err != nil:
				t.Errorf("%q refused: %v", tc.value, err)
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
				t.Errorf("%q: error %v, want %q", tc.value, err, tc.problem)
			}
		})
	}
}
