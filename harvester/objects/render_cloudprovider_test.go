package objects

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

func TestRenderCloudProviderGolden(t *testing.T) {
	out, err := renderArgs(t, "gc1-pool1-abcde-fghij", "--harvester-cluster-name", "gc1",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40", "--harvester-network-name", "default/vm-untag",
		"--harvester-generate-cloud-provider-config", "--harvester-cloud-provider-for-rke2", "--harvester-zone", "zone-a")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	golden.Assert(t, "render/cloud-provider.yaml", out)
}

// A K3s guest gets the kubeconfig where K3s's harvester-cloud-provider chart reads it, and K3s's drop-in.
func TestRenderCloudProviderK3sGolden(t *testing.T) {
	guest := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "guest-token", 1)
	out, err := renderArgs(t, "k3s-pool1-abcde-fghij", "--harvester-cluster-name", "k3s",
		"--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "40", "--harvester-network-name", "default/vm-untag",
		"--harvester-cloud-provider-config", base64.StdEncoding.EncodeToString([]byte(guest)),
		"--harvester-cloud-provider-distribution", "k3s", "--harvester-cloud-provider-drop-in")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	golden.Assert(t, "render/cloud-provider-k3s.yaml", out)
	for _, want := range []string{"/var/lib/rancher/k3s/etc/config-files/cloud-provider-config", "/etc/rancher/k3s/config.yaml.d/90-harvester-cloud-provider.yaml", "/etc/kubernetes/cloud-config"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("render writes no %s", want)
		}
	}
	if strings.Contains(string(out), "/rke2/") {
		t.Errorf("a K3s guest gets RKE2's files")
	}
}
