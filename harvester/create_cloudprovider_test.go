package harvester

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

func TestParseCloudProviderFlags(t *testing.T) {
	guest := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "guest-token", 1)
	proxied := strings.Replace(guest, "https://192.0.2.10:6443", "https://rancher.example.com/k8s/clusters/c-m-abc12", 1)
	tests := []struct {
		name string
		opts config.Options
		flag string
		want string
	}{
		{"generate without cluster", configtest.With(configtest.MinimalOptions(), config.FlagGenerateCloudProviderConfig, true), config.FlagGenerateCloudProviderConfig, "needs --harvester-cluster-name"},
		{"generate for a cluster named default", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "default", config.FlagGenerateCloudProviderConfig, true),
			config.FlagClusterName, `"default" is refused: every namespace has a ServiceAccount of that name`},
		{"generate for a cluster name that cannot name an account", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "GC_1", config.FlagGenerateCloudProviderConfig, true),
			config.FlagClusterName, `"GC_1" cannot name the guest cluster's ServiceAccount GC_1-cloud-provider: it must be a DNS-1123 subdomain`},
		{"generate for a cluster name too long for its token", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, strings.Repeat("a", 233), config.FlagGenerateCloudProviderConfig, true),
			config.FlagClusterName, "of at most 232 characters (with --harvester-generate-cloud-provider-config)"},
		{"both ways", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc1", config.FlagGenerateCloudProviderConfig, true, config.FlagCloudProviderConfig, guest), config.FlagGenerateCloudProviderConfig, "not both"},
		{"server without generate", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderServer, "https://10.0.0.1:6443"), config.FlagCloudProviderServer, "is only used with"},
		{"proxy server", configtest.With(configtest.MinimalOptions(), config.FlagClusterName, "gc1", config.FlagGenerateCloudProviderConfig, true, config.FlagCloudProviderServer, "https://rancher.example.com/k8s/clusters/c-1"), config.FlagCloudProviderServer, "is a Rancher proxy URL"},
		{"proxy kubeconfig", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderConfig, proxied), config.FlagCloudProviderConfig, "is a Rancher proxy URL"},
		{"the driver's own credential", configtest.With(configtest.MinimalOptions(), config.FlagKubeconfigContent, configtest.Kubeconfig, config.FlagCloudProviderConfig, base64.StdEncoding.EncodeToString([]byte(configtest.Kubeconfig))), config.FlagCloudProviderConfig, "is the Harvester credential of the driver itself"},
		{"rke2 drop-in without config", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderForRKE2, true), config.FlagCloudProviderForRKE2, "needs --harvester-cloud-provider-config or"},
		{"drop-in without config", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderDropIn, true), config.FlagCloudProviderDropIn, "needs --harvester-cloud-provider-config or"},
		{"distribution without config", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderDistribution, "k3s"), config.FlagCloudProviderDistribution, "is only used with --harvester-cloud-provider-config"},
		{"unknown distribution", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderConfig, guest, config.FlagCloudProviderDistribution, "k0s"), config.FlagCloudProviderDistribution, `must be k3s or rke2, got "k0s"`},
		{"RKE2's drop-in on K3s", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderConfig, guest, config.FlagCloudProviderDistribution, "k3s", config.FlagCloudProviderForRKE2, true), config.FlagCloudProviderForRKE2, "the distribution is k3s: use --harvester-cloud-provider-drop-in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.ParseConfig("m1", tt.opts)
			if err == nil || !strings.Contains(err.Error(), "--"+tt.flag+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want a problem on --%s containing %q, got %v", tt.flag, tt.want, err)
			}
		})
	}
	cfg, err := config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderConfig, guest, config.FlagCloudProviderForRKE2, true))
	if err != nil || string(cfg.CloudProvider.Kubeconfig) != guest || !cfg.CloudProvider.DropIn || cfg.CloudProvider.Distribution != config.Distributions["rke2"] {
		t.Fatalf("a scoped kubeconfig is accepted: %v %+v", err, cfg)
	}
	// Rancher's form may send the string flag empty: that is the default, RKE2.
	cfg, err = config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderConfig, guest, config.FlagCloudProviderDistribution, ""))
	if err != nil || cfg.CloudProvider.Distribution != config.Distributions["rke2"] || cfg.CloudProvider.DropIn {
		t.Fatalf("empty distribution: %v %+v", err, cfg)
	}
	cfg, err = config.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagCloudProviderConfig, guest, config.FlagCloudProviderDistribution, "K3s", config.FlagCloudProviderDropIn, true))
	if err != nil || cfg.CloudProvider.Distribution != config.Distributions["k3s"] || !cfg.CloudProvider.DropIn {
		t.Fatalf("k3s: %v %+v", err, cfg)
	}
}

// isGuestCloudProviderFile reports whether the driver writes path for the guest's cloud provider.
func isGuestCloudProviderFile(path string) bool {
	if path == config.GuestCloudConfigPath {
		return true
	}
	for _, d := range config.Distributions {
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
	fc.HarvesterSystem()
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "gc1-pool1-a-b", configtest.With(createOptions(), config.FlagClusterName, "gc1",
		config.FlagGenerateCloudProviderConfig, true, config.FlagCloudProviderForRKE2, true))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "gc1-pool1-a-b-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	userData := secret.Data["userdata"]
	files := guestFiles(t, userData)
	rke2 := config.Distributions["rke2"]
	for _, path := range []string{config.GuestCloudConfigPath, rke2.ConfigPath} {
		if !strings.Contains(files[path], "token: sa-token-gc1-cloud-provider-token") || !strings.Contains(files[path], "https://192.168.10.100:6443") {
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
	if strings.Contains(string(userData), "not-a-real-token") || strings.Contains(string(userData), base64.StdEncoding.EncodeToString([]byte(configtest.Kubeconfig))) {
		t.Fatalf("the driver's credential is in the guest's user data")
	}

	// The account belongs to the guest cluster: one machine's remove leaves it.
	if err := rmDriver(fc, "gc1-pool1-a-b", "gc1").Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.Get(ctx, fc.C, kube.ServiceAccounts, "default", "gc1-cloud-provider"); err != nil {
		t.Errorf("remove deleted the guest cluster's cloud provider account: %v", err)
	}
}

func TestPreCreateCheckCloudProviderAccess(t *testing.T) {
	fc := newFakeCluster(t)
	fc.HarvesterSystem()
	kubefake.CaptureLog(t)
	fc.Denied["create clusterrolebindings"] = true
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagClusterName, "gc1", config.FlagGenerateCloudProviderConfig, true))
	if err := d.PreCreateCheck(); err == nil || !strings.Contains(err.Error(), "may not create clusterrolebindings") {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	// The roles grant only what the credential holds (RBAC's escalation check): the pre-flight asks for it.
	delete(fc.Denied, "create clusterrolebindings")
	fc.Denied["update networkfilesystems"], fc.Denied["get settings"] = true, true
	if err := d.PreCreateCheck(); err == nil || !strings.Contains(err.Error(), "may not update networkfilesystems in namespace harvester-system, get settings csi-driver-config, get settings csi-online-expand-validation and get settings server-version") {
		t.Fatalf("PreCreateCheck: %v", err)
	}
	if _, err := kube.List(context.Background(), fc.C, kube.ServiceAccounts, "default", metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
