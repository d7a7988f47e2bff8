package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// limitStorage puts a storage quota on namespace ns the way Rancher does for a project's namespace, as Harvester's
// validator reads it (harvester/harvester pkg/util/resourcequota/calculator.go): the limit in the namespace's
// field.cattle.io/resourceQuota annotation, and the namespace's default ResourceQuota (whose used amount the
// validator reads). The ResourceQuota's own hard limit is 1Ti, wider than Rancher would make it, so that the
// driver's pre-flight, which reads ResourceQuotas, lets the machine through and Harvester's validator is what
// refuses it.
func limitStorage(t *testing.T, b *testbed.Bed, ns, limit string) {
	t.Helper()
	annotateNamespace(t, b, ns, "field.cattle.io/resourceQuota", `{"limit":{"requestsStorage":"`+limit+`"}}`)
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "default-quota",
			Labels: map[string]string{"resourcequota.management.cattle.io/default-resource-quota": "true"}},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("1Ti")}},
	}
	if _, err := b.Kube.CoreV1().ResourceQuotas(ns).Create(context.Background(), rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A ResourceQuota too small for the machine (a 10 GiB disk against 5 GiB of requests.storage) refuses it in
// pre-flight, naming the quota, the resource, what is free and what the machine needs: nothing is created. The
// check verb names the quota on its quota line.
func TestQuotaRefusesInPreflight(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team-quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("5Gi"),
			"count/virtualmachines.kubevirt.io": resource.MustParse("10")}},
	}
	if _, err := b.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager's quota controller fills status.hard and status.used; until then the quota is not
	// counted and the pre-flight skips it.
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := b.Kube.CoreV1().ResourceQuotas(ns).Get(ctx, rq.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Status.Used[corev1.ResourceRequestsStorage]; ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota controller did not count quota %s/%s: %+v", ns, rq.Name, got.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}

	want := "--harvester-disk-size: resource quota team-quota in namespace " + ns +
		": requests.storage has 5Gi free (0 of 5Gi used), the machine needs 10Gi (the sum of its disks' sizes)"
	cli := newCLI(t, b.AdminKubeconfig())
	r := cli.run(append(createArgs(t, ns), "m1")...)
	if r.Err == nil {
		t.Fatalf("create succeeded: %s", r)
	}
	t.Logf("what the user sees:\n%s", r.Output)
	if !strings.Contains(r.Output, "cannot create the machine on Harvester") || !strings.Contains(r.Output, want) {
		t.Errorf("the pre-flight's error does not say %q", want)
	}
	if strings.Contains(r.Output, "Creating VM") {
		t.Errorf("the create went past the pre-flight")
	}
	nothingLeft(t, b, ns)

	out, code := runCheck(t, b.AdminKubeconfig(), checkArgs(ns)...)
	if code != 1 || !strings.Contains(out, "problem  quota                 "+want) {
		t.Errorf("check: exit %d, want 1 and the quota named on its quota line", code)
	}
	if !strings.Contains(out, "ok       permissions") {
		t.Errorf("check: the quota's problem hid another check")
	}
}
