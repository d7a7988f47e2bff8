package config

import (
	"slices"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// DefaultEvictionStrategy is the VM's eviction strategy unless --harvester-eviction-strategy says otherwise:
// what Harvester's own VM templates and builder set (pkg/data/template.go, pkg/builder/vm.go), and what this
// driver always set.
const DefaultEvictionStrategy = string(kubevirtv1.EvictionStrategyLiveMigrateIfPossible)

// evictionStrategies are the values KubeVirt accepts (kubevirt.io/api core/v1 EvictionStrategy; virt-api's
// vmi-create-admitter.go isValidEvictionStrategy).
var evictionStrategies = []kubevirtv1.EvictionStrategy{
	kubevirtv1.EvictionStrategyLiveMigrateIfPossible,
	kubevirtv1.EvictionStrategyLiveMigrate,
	kubevirtv1.EvictionStrategyNone,
	kubevirtv1.EvictionStrategyExternal,
}

// maintenanceStrategies are the values of LabelMaintainModeStrategy that Harvester accepts
// (harvester/harvester pkg/util/constants.go MaintenanceModeStrategyValidValues; its VM webhook refuses others).
var maintenanceStrategies = []string{"Migrate", "ShutdownAndRestartAfterEnable", "ShutdownAndRestartAfterDisable", "Shutdown"}

// parseStrategies reads --harvester-eviction-strategy (empty means the default) and
// --harvester-maintenance-strategy (empty means no label: Harvester's own default, Migrate).
func parseStrategies(p *Problems, opts drivers.DriverOptions) (kubevirtv1.EvictionStrategy, string) {
	eviction := kubevirtv1.EvictionStrategy(orDefault(strings.TrimSpace(opts.String(FlagEvictionStrategy)), DefaultEvictionStrategy))
	if !slices.Contains(evictionStrategies, eviction) {
		p.Addf(FlagEvictionStrategy, "must be one of %s (KubeVirt's eviction strategies), got %q", lists.Or(evictionStrategies), eviction)
	}
	maintenance := strings.TrimSpace(opts.String(FlagMaintenanceStrategy))
	if maintenance != "" && !slices.Contains(maintenanceStrategies, maintenance) {
		p.Addf(FlagMaintenanceStrategy, "must be one of %s (Harvester's maintenance-mode strategies), got %q", lists.Or(maintenanceStrategies), maintenance)
	}
	return eviction, maintenance
}
