package harvester

import (
	"slices"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
)

// The permission table holds the driver's access lists and nothing else: what the access reviews ask for (the
// pre-flight's, neededAccess, and the IP pools', ippool.Check and iplease.Check) and what a check's own read is refused without (the
// data Secrets') in needs a credential is refused without, what checks only read in needs marked OptionalRead;
// each need names real flags.
func TestPermissionsAreTheAccessLists(t *testing.T) {
	var flags []string
	for _, f := range config.CreateFlags() {
		flags = append(flags, f.String())
	}
	var asked, read []kube.Access
	for _, n := range Permissions() {
		if strings.HasSuffix(n.When, OptionalRead) {
			read = append(read, n.Access...)
		} else {
			asked = append(asked, n.Access...)
		}
		for _, f := range n.Flags {
			if !slices.Contains(flags, f) {
				t.Errorf("%s: %s is not a flag", n.When, f)
			}
		}
		if (len(n.Flags) == 0) != (n.When == "always" || strings.HasPrefix(n.When, "resource quotas")) {
			t.Errorf("%s: flags %v", n.When, n.Flags)
		}
	}
	sameAccess(t, "asked for", asked, slices.Concat(createAccess, kube.WatchMachineAccess, removeAccess, preflight.ImageAccess, cleanupAccess, ippool.Access,
		iplease.Access, []kube.Access{iplease.PinAccess}, guestaccount.Access, preflight.KeyPairAccess, preflight.DataSecretAccess, preflight.VMPatchObjectAccess))
	sameAccess(t, "only read", read, slices.Concat(preflight.QuotaAccess, []kube.Access{preflight.LBPoolAccess, iplease.PoolAccess, preflight.SubnetAccess}, preflight.HostDeviceAccess, preflight.DeviceCapacityAccess))
}

func sameAccess(t *testing.T, what string, got, want []kube.Access) {
	t.Helper()
	for _, a := range want {
		if !slices.Contains(got, a) {
			t.Errorf("%s: the table lacks %s (%s)", what, a, a.Group)
		}
	}
	for _, a := range got {
		if !slices.Contains(want, a) {
			t.Errorf("%s: the table lists %s (%s), which no access list declares", what, a, a.Group)
		}
	}
}
