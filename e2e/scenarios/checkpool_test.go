package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// poolConfig is a HarvesterConfig as `kubectl get harvesterconfig -n fleet-default NAME -o yaml` prints it: a
// pool of machines with a 10 GiB disk in namespace ns.
func poolConfig(ns string) string {
	return `apiVersion: rke-machine-config.cattle.io/v1
kind: HarvesterConfig
metadata:
  name: nc-gc9-pool1-x7k2p
  namespace: fleet-default
  resourceVersion: "4711"
cpuCount: "2"
memorySize: "4"
diskSize: "10"
diskBus: virtio
imageName: default/ubuntu-22.04
networkName: default/vm-untag
vmNamespace: ` + ns + `
sshUser: ubuntu
userData: ""
enableTpm: false
`
}

// A pool's quantity is checked at once: a machine config that one machine passes (a 10 GiB disk against a
// 25 GiB storage quota) is refused for a pool of three, on the quota line, saying what three machines need.
func TestCheckVerbCountsThePool(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	newCLI(t, b.AdminKubeconfig()) // builds the plugin
	ctx := context.Background()
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-quota"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("25Gi")}},
	}
	if _, err := b.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaCounted(t, b, ns, rq.Name, corev1.ResourceRequestsStorage)
	file := filepath.Join(t.TempDir(), "pool.yaml")
	if err := os.WriteFile(file, []byte(poolConfig(ns)), 0o600); err != nil {
		t.Fatal(err)
	}

	out, code := runCheck(t, b.AdminKubeconfig(), "--machine-config", file)
	if code != 0 || !strings.Contains(out, "ok       quota") {
		t.Fatalf("one machine: exit %d, want 0 and the quota ok", code)
	}
	out, code = runCheck(t, b.AdminKubeconfig(), "--machine-config", file, "--count", "3")
	want := "problem  quota                 --harvester-disk-size: resource quota pool-quota in namespace " + ns +
		": requests.storage has 25Gi free (0 of 25Gi used), 3 machines need 30Gi (3 times the sum of its disks' sizes)"
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("three machines: exit %d, want 1 and %q", code, want)
	}
	// A flag given wins over the file: three machines of 8 GiB disks fit.
	if out, code = runCheck(t, b.AdminKubeconfig(), "--machine-config", file, "--count", "3", "--harvester-disk-size", "8"); code != 0 {
		t.Errorf("three machines of 8 GiB: exit %d\n%s", code, out)
	}
}

// quotaCounted waits until kube-controller-manager's quota controller has counted res in quota ns/name: until
// then the pre-flight skips the quota.
func quotaCounted(t *testing.T, b *testbed.Bed, ns, name string, res corev1.ResourceName) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := b.Kube.CoreV1().ResourceQuotas(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Status.Used[res]; ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota controller did not count quota %s/%s: %+v", ns, name, got.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
