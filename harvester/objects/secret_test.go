package objects

import (
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// User data and network data that each fit, but not together, are refused before anything is sent: the API
// server would refuse the Secret halfway through a create.
func TestCloudInitSecretFitsAKubernetesSecret(t *testing.T) {
	user := "#cloud-config\n#" + strings.Repeat("u", 700<<10) + "\n"
	network := "version: 2\n#" + strings.Repeat("n", 400<<10) + "\nethernets: {}\n"
	cfg, err := config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagUserData, user, config.FlagNetworkData, network))
	if err != nil {
		t.Fatalf("each part alone is accepted: %v", err)
	}
	m, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Render(m)
	if err == nil || !strings.Contains(err.Error(), "--harvester-user-data: the cloud-init Secret would hold 1.1 MiB (user data 700.") ||
		!strings.Contains(err.Error(), "network data 400 KiB") || !strings.Contains(err.Error(), "over the 1 MiB a Kubernetes Secret holds") {
		t.Fatalf("want the Secret's size refused, got %v", err)
	}
	cfg.NetworkData = nil
	if m, err = Build(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(m); err != nil {
		t.Fatalf("the user data alone fits: %v", err)
	}
}
