package harvester

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

func TestParseCloudProviderFlags(t *testing.T) {
	guest := strings.Replace(testKubeconfig, "not-a-real-token", "guest-token", 1)
	proxied := strings.Replace(guest, "https://192.0.2.10:6443", "https://rancher.example.com/k8s/clusters/c-m-abc12", 1)
	tests := []struct {
		name string
		opts Options
		flag string
		want string
	}{
		{"generate without cluster", with(minimalOptions(), FlagGenerateCloudProviderConfig, true), FlagGenerateCloudProviderConfig, "needs --harvester-cluster-name"},
		{"both ways", with(minimalOptions(), FlagClusterName, "gc1", FlagGenerateCloudProviderConfig, true, FlagCloudProviderConfig, guest), FlagGenerateCloudProviderConfig, "not both"},
		{"server without generate", with(minimalOptions(), FlagCloudProviderServer, "https://10.0.0.1:6443"), FlagCloudProviderServer, "is only used with"},
		{"proxy server", with(minimalOptions(), FlagClusterName, "gc1", FlagGenerateCloudProviderConfig, true, FlagCloudProviderServer, "https://rancher.example.com/k8s/clusters/c-1"), FlagCloudProviderServer, "is a Rancher proxy URL"},
		{"proxy kubeconfig", with(minimalOptions(), FlagCloudProviderConfig, proxied), FlagCloudProviderConfig, "is a Rancher proxy URL"},
		{"the driver's own credential", with(minimalOptions(), FlagKubeconfigContent, testKubeconfig, FlagCloudProviderConfig, base64.StdEncoding.EncodeToString([]byte(testKubeconfig))), FlagCloudProviderConfig, "is the Harvester credential of the driver itself"},
		{"rke2 drop-in without config", with(minimalOptions(), FlagCloudProviderForRKE2, true), FlagCloudProviderForRKE2, "needs --harvester-cloud-provider-config or"},
		{"drop-in without config", with(minimalOptions(), FlagCloudProviderDropIn, true), FlagCloudProviderDropIn, "needs --harvester-cloud-provider-config or"},
		{"distribution without config", with(minimalOptions(), FlagCloudProviderDistribution, "k3s"), FlagCloudProviderDistribution, "is only used with --harvester-cloud-provider-config"},
		{"unknown distribution", with(minimalOptions(), FlagCloudProviderConfig, guest, FlagCloudProviderDistribution, "k0s"), FlagCloudProviderDistribution, `must be k3s or rke2, got "k0s"`},
		{"RKE2's drop-in on K3s", with(minimalOptions(), FlagCloudProviderConfig, guest, FlagCloudProviderDistribution, "k3s", FlagCloudProviderForRKE2, true), FlagCloudProviderForRKE2, "the distribution is k3s: use --harvester-cloud-provider-drop-in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("m1", tt.opts)
			if err == nil || !strings.Contains(err.Error(), "--"+tt.flag+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want a problem on --%s containing %q, got %v", tt.flag, tt.want, err)
			}
		})
	}
	cfg, err := ParseConfig("m1", with(minimalOptions(), FlagCloudProviderConfig, guest, FlagCloudProviderForRKE2, true))
	if err != nil || string(cfg.CloudProvider.Kubeconfig) != guest || !cfg.CloudProvider.DropIn || cfg.CloudProvider.Distribution != distributions["rke2"] {
		t.Fatalf("a scoped kubeconfig is accepted: %v %+v", err, cfg)
	}
	// Rancher's form may send the string flag empty: that is the default, RKE2.
	cfg, err = ParseConfig("m1", with(minimalOptions(), FlagCloudProviderConfig, guest, FlagCloudProviderDistribution, ""))
	if err != nil || cfg.CloudProvider.Distribution != distributions["rke2"] || cfg.CloudProvider.DropIn {
		t.Fatalf("empty distribution: %v %+v", err, cfg)
	}
	cfg, err = ParseConfig("m1", with(minimalOptions(), FlagCloudProviderConfig, guest, FlagCloudProviderDistribution, "K3s", FlagCloudProviderDropIn, true))
	if err != nil || cfg.CloudProvider.Distribution != distributions["k3s"] || !cfg.CloudProvider.DropIn {
		t.Fatalf("k3s: %v %+v", err, cfg)
	}
}

// isGuestCloudProviderFile reports whether the driver writes path for the guest's cloud provider.
func isGuestCloudProviderFile(path string) bool {
	if path == guestCloudConfigPath {
		return true
	}
	for _, d := range distributions {
		if path == d.ConfigPath || path == d.DropInPath {
			return true
		}
	}
	return false
}

// guestFiles reads the files a Secret's user data writes.
func guestFiles(t *testing.T, userData []byte) map[string]string {
	t.Helper()
	var doc struct {
		WriteFiles []struct{ Path, Encoding, Content, Owner, Permissions string } `yaml:"write_files"`
	}
	if err := yaml.Unmarshal(userData, &doc); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range doc.WriteFiles {
		content := f.Content
		if f.Encoding == "b64" {
			b, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil {
				t.Fatal(err)
			}
			content = string(b)
		}
		if isGuestCloudProviderFile(f.Path) && (f.Owner != "root:root" || f.Permissions != "0600") {
			t.Errorf("%s: owner %q, permissions %q; it holds a token: root, 0600", f.Path, f.Owner, f.Permissions)
		}
		files[f.Path] = content
	}
	return files
}

func TestCreateGeneratesTheGuestCloudProviderConfig(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterRBAC()
	fc.kubeVirt(healthy("10.0.0.5"))
	captureLog(t)
	d := newTestDriver(t, fc, "gc1-pool1-a-b", with(createOptions(), FlagClusterName, "gc1",
		FlagGenerateCloudProviderConfig, true, FlagCloudProviderForRKE2, true))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret, err := kube.Get(ctx, fc.c, kube.Secrets, "default", "gc1-pool1-a-b-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	userData := secret.Data["userdata"]
	files := guestFiles(t, userData)
	rke2 := distributions["rke2"]
	for _, path := range []string{guestCloudConfigPath, rke2.ConfigPath} {
		if !strings.Contains(files[path], "token: sa-token-gc1-token") || !strings.Contains(files[path], "https://192.168.10.100:6443") {
			t.Errorf("%s:\n%s", path, files[path])
		}
	}
	if !strings.Contains(files[rke2.DropInPath], "cloud-provider-name: harvester") {
		t.Errorf("RKE2 drop-in: %q", files[rke2.DropInPath])
	}
	if len(files) != 4 { // the three and Rancher's install script
		t.Errorf("files written: %v", keysOf(files))
	}
	// The driver's own credential must never reach a guest: every pod on the node could read it.
	if strings.Contains(string(userData), "not-a-real-token") || strings.Contains(string(userData), base64.StdEncoding.EncodeToString([]byte(testKubeconfig))) {
		t.Fatalf("the driver's credential is in the guest's user data")
	}

	// The account belongs to the guest cluster: one machine's remove leaves it.
	if err := rmDriver(fc, "gc1-pool1-a-b", "gc1").Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.Get(ctx, fc.c, kube.ServiceAccounts, "default", "gc1"); err != nil {
		t.Errorf("remove deleted the guest cluster's cloud provider account: %v", err)
	}
}

func TestPreCreateCheckCloudProviderAccess(t *testing.T) {
	fc := newFakeCluster(t)
	fc.harvesterRBAC()
	captureLog(t)
	fc.denied["create clusterrolebindings"] = true
	d := newTestDriver(t, fc, "m1", with(createOptions(), FlagClusterName, "gc1", FlagGenerateCloudProviderConfig, true))
	if err := d.PreCreateCheck(); err == nil || !strings.Contains(err.Error(), "may not create clusterrolebindings") {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	if _, err := kube.List(context.Background(), fc.c, kube.ServiceAccounts, "default", metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

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
	guest := strings.Replace(testKubeconfig, "not-a-real-token", "guest-token", 1)
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

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
