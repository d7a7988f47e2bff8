package config

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// driverLabels are the labels vmLabels sets itself: --harvester-vm-labels cannot give them.
var driverLabels = []string{LabelCreator, LabelVMName, LabelMachineSetName, LabelGuestCluster, LabelNodePool}

const vmLabelsFormat = "key=value,key=value, e.g. team=ml,env=prod"

// parseVMLabels reads --harvester-vm-labels: key=value pairs, comma-separated, each checked as a Kubernetes
// label. The driver's own labels cannot be given, nor the maintenance-strategy label when
// --harvester-maintenance-strategy sets it (strategyFlag). Empty entries are skipped.
func parseVMLabels(p *Problems, raw string, strategyFlag bool) map[string]string {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	labels := map[string]string{}
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		key, value, ok := strings.Cut(entry, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok {
			p.Addf(FlagVMLabels, "%q is not key=value; want %s", entry, vmLabelsFormat)
			continue
		}
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			p.Addf(FlagVMLabels, "%q is not a Kubernetes label key: %s", key, strings.Join(msgs, "; "))
			continue
		}
		if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
			p.Addf(FlagVMLabels, "label %s: %q is not a Kubernetes label value: %s", key, value, strings.Join(msgs, "; "))
		}
		switch {
		case slices.Contains(driverLabels, key):
			p.Addf(FlagVMLabels, "label %s is set by the driver (Harvester, its cloud provider and the driver's own cleanup rely on it) and cannot be given", key)
		case key == LabelMaintainModeStrategy && strategyFlag:
			p.Addf(FlagVMLabels, "label %s is set by --%s; give the strategy there only", key, FlagMaintenanceStrategy)
		case key == LabelMaintainModeStrategy && !slices.Contains(maintenanceStrategies, value):
			p.Addf(FlagVMLabels, "label %s must be one of %s (Harvester refuses other values), got %q", key, lists.Or(maintenanceStrategies), value)
		}
		if _, dup := labels[key]; dup {
			p.Addf(FlagVMLabels, "label %s is given twice", key)
		}
		labels[key] = value
	}
	return labels
}
