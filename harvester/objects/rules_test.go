package objects

import (
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// With Rules, parsing refuses what only merging the user data with the driver's own parts finds (the user data
// reads as YAML; its runcmd cannot be merged with the driver's), with the other problems, where config tells
// the user data's: after the cloud provider's, before the IP pool's.
func TestRulesRefuseUserDataACreateCannotMerge(t *testing.T) {
	o := configtest.With(configtest.MinimalOptions(),
		config.FlagUserData, "#cloud-config\nruncmd: oops\n",
		config.FlagCloudProviderServer, "https://192.0.2.10:6443",
		config.FlagIPPool, "x")
	_, err := config.ParseConfig("m1", o, Rules...)
	if err == nil {
		t.Fatal("the configuration is accepted")
	}
	configtest.WantAll(t, err.Error(), "(3 problems):\n"+
		"  --harvester-cloud-provider-server: is only used with --harvester-generate-cloud-provider-config\n"+
		"  --harvester-user-data: runcmd: must be a list, not a string\n"+
		"  --harvester-ip-pool: must be ")

}
