package config

// The accepted strategy values, for the tests of package config_test.
var (
	EvictionStrategies    = evictionStrategies
	MaintenanceStrategies = maintenanceStrategies
)

// Rules are the validation pass, for the tests of package config_test.
func Rules() []Rule { return rules }
