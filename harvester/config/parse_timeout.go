package config

import (
	"strconv"
	"strings"
	"time"
)

// parseCreateTimeout reads --harvester-create-timeout, in whole seconds; empty means DefaultCreateTimeoutSecs.
// It is a string flag: Rancher declares an int flag's value, 0 included, as a default of its HarvesterConfig
// CRD (rancher/rancher pkg/controllers/management/drivers/nodedriver/utils.go, FlagToField: strconv.Itoa), which
// would put --harvester-create-timeout=0 on the command line of every pool that adopts this driver's schema.
// Rancher carries int flags as string fields anyway, so its users see no difference.
func parseCreateTimeout(p *Problems, raw string) time.Duration {
	v := strings.TrimSpace(raw)
	if v == "" {
		return DefaultCreateTimeoutSecs * time.Second
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		p.Addf(FlagCreateTimeout, "must be a positive whole number of seconds (at most %d), got %q", MaxCreateTimeoutSecs, raw)
		return 0
	}
	return time.Duration(inRange(p, FlagCreateTimeout, n, MaxCreateTimeoutSecs, "a positive whole number of seconds")) * time.Second
}
