package config

import "strings"

// DefaultOS is the only guest operating system the driver builds for: one that boots with cloud-init.
const DefaultOS = "linux"

// parseOS checks --harvester-os (any case; empty means linux). rancher-machine's --custom-install-script reads the
// same value (commands/create.go, writeCloudConfig): anything containing "windows" makes it write a PowerShell
// script for cloudbase-init, which a cloud-init guest would never run, so only linux is accepted.
func parseOS(p *Problems, value string) {
	switch v := strings.ToLower(strings.TrimSpace(value)); {
	case v == "" || v == DefaultOS:
	case strings.Contains(v, "windows"):
		p.Addf(FlagOS, "%q is not supported: the driver builds cloud-init guests only (Linux); Windows guests boot with cloudbase-init. Use linux", value)
	default:
		p.Addf(FlagOS, "must be linux, the only guest operating system the driver builds for (cloud-init), got %q", value)
	}
}
