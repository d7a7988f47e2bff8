package kubefake

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// VIP is the virtual IP HarvesterSystem's vip ConfigMap gives.
const VIP = "192.168.10.100"

// HarvesterSystem seeds Harvester's harvester-system namespace with its vip ConfigMap (data.ip, as Harvester's
// kubeconfig endpoint reads it), and imitates kube-controller-manager's token controller: a service-account
// token Secret gets its token ("sa-token-<name>") and CA ("harvester-ca") shortly after it is created.
func (fc *Cluster) HarvesterSystem() {
	ctx := context.Background()
	fc.Namespace("harvester-system")
	fc.OK(kube.Create(ctx, fc.C, kube.ConfigMaps, "harvester-system", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vip"}, Data: map[string]string{"ip": VIP}}))
	fc.Dyn.PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		if u.Object["type"] != string(corev1.SecretTypeServiceAccountToken) {
			return false, nil, nil
		}
		ns, name := u.GetNamespace(), u.GetName()
		go func() { // not from inside the reactor: the fake holds its lock
			Eventually(fc.T, "the token Secret exists", func() bool { _, err := kube.Get(ctx, fc.C, kube.Secrets, ns, name); return err == nil })
			s, _ := kube.Get(ctx, fc.C, kube.Secrets, ns, name)
			if (len(s.Data["ca.crt"]) > 0 && len(s.Data["token"]) > 0) || s.Type != corev1.SecretTypeServiceAccountToken {
				return // a create that failed with AlreadyExists: the controller has nothing to do
			}
			s.Data = map[string][]byte{"token": []byte("sa-token-" + name), "ca.crt": []byte("harvester-ca")}
			if _, err := kube.Update(ctx, fc.C, kube.Secrets, ns, s); err != nil {
				fc.T.Errorf("token controller: %v", err)
			}
		}()
		return false, nil, nil
	})
}
