package objects

import (
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// ParseConfig refuses what only merging the user data with the driver's own parts finds (the user data reads as
// YAML; its runcmd cannot be merged with the driver's), with the flags' own problems, after them.
func TestParseConfigRefusesUserDataACreateCannotMerge(t *testing.T) {
	o := configtest.With(configtest.MinimalOptions(),
		config.FlagUserData, "#cloud-config\nruncmd: oops\n",
		config.FlagCloudProviderServer, "https://192.0.2.10:6443",
		config.FlagIPPool, "x")
	_, _, err := ParseConfig("m1", o)
	if err == nil {
		t.Fatal("the configuration is accepted")
	}
	configtest.WantAll(t, err.Error(), "(3 problems):\n"+
		"  --harvester-cloud-provider-server: is only used with --harvester-generate-cloud-provider-config\n"+
		"  --harvester-ip-pool: must be ")
	configtest.WantAll(t, err.Error(), "\n  --harvester-user-data: runcmd: must be a list, not a string")

}
