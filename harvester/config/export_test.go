package config

// The accepted strategy values, for the tests of package config_test.
var (
	EvictionStrategies    = evictionStrategies
	MaintenanceStrategies = maintenanceStrategies
)

// Groups are the names of the groups of flags, in order, and Rules the validation pass, for the tests of package
// config_test.
func Groups() []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.name)
	}
	return out
}

func Rules() []Rule { return rules }
