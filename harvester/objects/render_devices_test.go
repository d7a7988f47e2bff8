package objects

import (
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

// Host devices, the user's labels and the two strategies, as the render subcommand shows them.
func TestRenderDevicesLabelsStrategiesGolden(t *testing.T) {
	out, err := renderArgs(t, "gc1-pool1-abcde-fghij", "--harvester-cluster-name", "gc1",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40", "--harvester-network-name", "default/vm-untag",
		"--harvester-host-device-info", `{"hostDevices":[{"name":"gpu1","deviceName":"nvidia.com/GA102GL_A10"}]}`,
		"--harvester-vm-labels", "team=ml,example.com/cost-center=42",
		"--harvester-eviction-strategy", "LiveMigrate", "--harvester-maintenance-strategy", "Shutdown")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	golden.Assert(t, "render/devices-labels-strategies.yaml", out)
}
