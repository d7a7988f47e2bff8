package scenarios

import (
	"context"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/admission"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// setOvercommit sets the value of the bed's overcommit-config Setting ("" falls back to its default) and waits
// until the API server's watch cache, which the driver's pre-flight reads, and Harvester's mutator, which reads it
// from an informer as on Harvester, have it. The bed's value is restored when the test ends, and awaited the same
// way.
func setOvercommit(t *testing.T, b *testbed.Bed, value string) {
	t.Helper()
	ctx := context.Background()
	settings := b.Dynamic.Resource(admission.Settings)
	s, err := settings.Get(ctx, "overcommit-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.Object["value"].(string)
	s.Object["value"] = value
	if _, err := settings.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s, err := settings.Get(ctx, "overcommit-config", metav1.GetOptions{})
		if err == nil {
			s.Object["value"] = before
			_, err = settings.Update(ctx, s, metav1.UpdateOptions{})
		}
		if err == nil {
			err = b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, admission.Settings, "", "overcommit-config")
		}
		if err != nil {
			t.Errorf("restore overcommit-config: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := settings.Get(ctx, "overcommit-config", metav1.GetOptions{ResourceVersion: "0"})
		if err == nil && s.Object["value"] == value {
			if err := b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, admission.Settings, "", "overcommit-config"); err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch cache does not show overcommit-config %q: %v", value, err)
		}
	}
}

// countedQuota creates ResourceQuota name in ns and waits until the quota controller has counted every resource.
func countedQuota(t *testing.T, b *testbed.Bed, ns, name string, hard corev1.ResourceList) {
	t.Helper()
	ctx := context.Background()
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if _, err := b.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		got, err := b.Kube.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Used) == len(hard) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota controller did not count quota %s/%s: %+v", ns, name, got.Status)
		}
	}
}

// What the pre-flight says the machine needs of a request quota.
var needsRE = map[corev1.ResourceName]*regexp.Regexp{
	corev1.ResourceRequestsCPU:    regexp.MustCompile(`requests\.cpu has \S+ free \([^)]*\), the machine needs (\S+) `),
	corev1.ResourceRequestsMemory: regexp.MustCompile(`requests\.memory has \S+ free \([^)]*\), the machine needs (\S+) `),
}

// The CPU and memory requests the quota pre-flight computes are those Harvester's own VM mutator writes on the
// machine's VM, for several overcommit-config values and reserved-memory sizes: check, against a quota too small
// for any request, names the driver's figures; the machine is then created (the quota removed) and its stored VM
// holds the mutator's. (Reserved memory changes the memory request only with host devices or vGPUs, which the
// unit test TestVMRequests and the golden TestGoldenVMsMutatedByHarvester cover; here it must change nothing.)
func TestQuotaRequestsAsHarvesterMutates(t *testing.T) {
	b := testbed.Shared(t)
	for _, tc := range []struct {
		name, overcommit string
		flags            []string
	}{
		{"Harvester's default", "", nil},
		{"cpu 1600 memory 200, 512Mi reserved", `{"cpu":1600,"memory":200,"storage":100}`,
			[]string{"--harvester-reserved-memory-size", "512"}},
		{"cpu 700 memory 130, 3 cores 5Gi, 256Mi reserved", `{"cpu":700,"memory":130,"storage":100}`,
			[]string{"--harvester-cpu-count", "3", "--harvester-memory-size", "5", "--harvester-reserved-memory-size", "256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := b.Namespace(t)
			cli := newCLI(t, b.AdminKubeconfig()) // also builds the plugin check runs
			setOvercommit(t, b, tc.overcommit)
			countedQuota(t, b, ns, "tiny", corev1.ResourceList{
				corev1.ResourceRequestsCPU: resource.MustParse("1m"), corev1.ResourceRequestsMemory: resource.MustParse("1Mi")})
			out, code := runCheck(t, b.AdminKubeconfig(), append(checkArgs(ns), tc.flags...)...)
			if code != 1 {
				t.Fatalf("check: exit %d, want 1 for the quota:\n%s", code, out)
			}
			needs := map[corev1.ResourceName]resource.Quantity{}
			for res, re := range needsRE {
				m := re.FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("check names no need of %s:\n%s", res, out)
				}
				needs[res] = resource.MustParse(m[1])
			}
			if err := b.Kube.CoreV1().ResourceQuotas(ns).Delete(context.Background(), "tiny", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}

			name := "requests"
			cli.must(append(createArgs(t, ns, tc.flags...), name)...)
			vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stored := vm.Spec.Template.Spec.Domain.Resources.Requests
			for res, need := range needs {
				got, ok := stored[corev1.ResourceName(res[len("requests."):])]
				if !ok || got.Cmp(need) != 0 {
					t.Errorf("%s: the pre-flight computed %s, Harvester's mutator wrote %v (requests %v)", res, &need, &got, stored)
				}
			}
			t.Logf("overcommit-config %q, flags %v: requests.cpu %s, requests.memory %s", tc.overcommit, tc.flags,
				stored.Cpu(), stored.Memory())
			cli.must("rm", "-y", name)
		})
	}
}
