package scenarios

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// limitStorage puts a storage quota on namespace ns the way Rancher does for a project's namespace, as Harvester's
// validator reads it (harvester/harvester pkg/util/resourcequota/calculator.go): the limit in the namespace's
// field.cattle.io/resourceQuota annotation, and the namespace's default ResourceQuota.
func limitStorage(t *testing.T, b *testbed.Bed, ns, limit string) {
	t.Helper()
	annotateNamespace(t, b, ns, "field.cattle.io/resourceQuota", `{"limit":{"requestsStorage":"`+limit+`"}}`)
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "default-quota",
			Labels: map[string]string{"resourcequota.management.cattle.io/default-resource-quota": "true"}},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse(limit)}},
	}
	if _, err := b.Kube.CoreV1().ResourceQuotas(ns).Create(context.Background(), rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
