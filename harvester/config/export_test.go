package config

// The accepted strategy values, for the tests of package config_test.
var (
	EvictionStrategies    = evictionStrategies
	MaintenanceStrategies = maintenanceStrategies
)
