package harvester

import (
	"context"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

func dataSecretsGiven(cfg *config.Config) bool {
	return cfg.UserDataSecret != nil || cfg.NetworkDataSecret != nil
}

// checkDataSecrets reads the Secrets of --harvester-user-data-secret and --harvester-network-data-secret and
// checks what they hold as the create will use it (readDataSecrets): the Secret exists and the credential may
// read it, the key is there, the value is within the inline flags' bounds and cloud-init reads it. What they
// hold is its findings, which Create uses. It is skipped when the namespace does not exist. Network data that
// would give a NIC on an overlay network a static address is refused (refuseStaticOnOverlay).
func checkDataSecrets(ctx context.Context, r *checkRun) {
	found := readDataSecrets(ctx, r.c, r.cfg, &r.p)
	if found == nil {
		return
	}
	r.findings = found
	if found.network != nil { // no static address for a NIC on an overlay network (precreate_overlay.go)
		overlays, _ := r.findingsOf(CheckNetworks).([]overlayNIC)
		refuseStaticOnOverlay(&r.p, config.FlagNetworkDataSecret, r.cfg.NICs, overlays, found.network.Data)
	}
	var seen []string
	cfg := r.cfg.WithSecretData(found.user, found.network)
	for _, v := range []struct {
		ref   *config.SecretKeyRef
		value *config.SecretValue
	}{{cfg.UserDataSecret, found.user}, {cfg.NetworkDataSecret, found.network}} {
		if v.ref != nil {
			seen = append(seen, dataOf(v.ref)+" from "+v.ref.String()+" ("+v.value.Size()+")")
		}
	}
	r.detail = strings.Join(seen, "; ")
}
