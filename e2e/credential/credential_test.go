package credential_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubevirt"

	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// A cloud-provider credential (Harvester's kubeconfig endpoint) may do what its roles say and nothing more;
// after rotation the new token works and the revoked one is refused.
func TestCloudProviderCredential(t *testing.T) {
	bed := testbed.StartT(t, testbed.Options{NoStandIn: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := bed.Namespace(t)

	old, err := bed.Credential(ctx, credential.CloudProvider(ns, "guest1"))
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(old.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if c := kc.Contexts[kc.CurrentContext]; kc.CurrentContext != "default" || c.Namespace != ns || kc.Clusters["default"].Server != bed.ControlPlane.URL() {
		t.Errorf("kubeconfig: context %q, namespace %q, server %q", kc.CurrentContext, c.Namespace, kc.Clusters["default"].Server)
	}
	kube, virt := clients(t, old)

	// harvesterhci.io:cloudprovider, bound in ns: read VMs there.
	if _, err := virt.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list VMs in its namespace: %v", err)
	}
	// harvesterhci.io:csi-driver, bound cluster-wide: read storage classes.
	if _, err := kube.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list storage classes: %v", err)
	}
	forbidden := map[string]error{
		"list VMs in another namespace": func() error {
			_, err := virt.KubevirtV1().VirtualMachines("default").List(ctx, metav1.ListOptions{})
			return err
		}(),
		"create a VM": func() error {
			_, err := virt.KubevirtV1().VirtualMachines(ns).Create(ctx, &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}(),
		"read Secrets": func() error {
			_, err := kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		}(),
	}
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want 403 Forbidden", what, err)
		}
	}

	rotated := credential.CloudProvider(ns, "guest1")
	rotated.SecretName = "guest1-token-2"
	fresh, err := bed.Credential(ctx, rotated)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Token == old.Token {
		t.Fatal("the second token Secret carries the same token")
	}
	t0 := time.Now()
	if err := old.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("revoked token refused %v after its Secret was deleted", time.Since(t0).Round(10*time.Millisecond))
	if _, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("request with the revoked token: %v, want 401 Unauthorized", err)
	}
	if ok, err := fresh.Authenticates(ctx); !ok || err != nil {
		t.Errorf("rotated credential: authenticates %v, %v", ok, err)
	}
	_, virt2 := clients(t, fresh)
	if _, err := virt2.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("rotated credential, list VMs: %v", err)
	}
}

func clients(t *testing.T, c *credential.Credential) (kubernetes.Interface, kubevirt.Interface) {
	t.Helper()
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg), kubevirt.NewForConfigOrDie(cfg)
}
