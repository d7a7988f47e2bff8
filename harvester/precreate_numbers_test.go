package harvester

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// Numbers from the cluster and the user, at and past their bounds: nothing wraps, nothing computes without
// bound, and an amount no Kubernetes quantity holds is named, never taken for another.

// addRawQuota makes a ResourceQuota in namespace default whose hard and used amounts are the strings given
// (resource, hard, used triples), as a server may send them: nothing here parses them.
func (fc *fakeCluster) addRawQuota(name string, hardUsed ...string) {
	hard, used := map[string]any{}, map[string]any{}
	for i := 0; i < len(hardUsed); i += 3 {
		hard[hardUsed[i]] = hardUsed[i+1]
		if hardUsed[i+2] != "" {
			used[hardUsed[i]] = hardUsed[i+2]
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"hard": hard},
		"status":   map[string]any{"hard": hard, "used": used},
	}}
	fc.OK(fc.Dyn.Resource(corev1.SchemeGroupVersion.WithResource("resourcequotas")).Namespace("default").Create(context.Background(), u, metav1.CreateOptions{}))
}

// checkNamed runs d's pre-flight and returns its check of that name.
func checkNamed(t *testing.T, d *Driver, name string) preflight.Check {
	t.Helper()
	for _, c := range d.preflight(context.Background(), nil).Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check", name)
	return preflight.Check{}
}

// quotaCheckOf runs the pre-flight of a machine with opts and returns its quota check.
func quotaCheckOf(t *testing.T, fc *fakeCluster, opts config.Options) preflight.Check {
	t.Helper()
	return checkNamed(t, newTestDriver(t, fc, "m1", opts), preflight.CheckQuota)
}

// withinBounds runs f, failing the test when it allocates more than maxAlloc bytes, and stops waiting for it
// after a minute: an input that makes f compute without bound fails instead of hanging the test.
func withinBounds(t *testing.T, maxAlloc uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("still computing after a minute")
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc {
		t.Fatalf("allocated %d KB, more than %d KB: the quantity was parsed or computed with", alloc>>10, maxAlloc>>10)
	}
}

// A quota amount whose parse or arithmetic has no bound — 1e-1000000000 (resource.ParseQuantity rounds it to 1n
// by dividing by 10^(10^9)), 1e1000000000 less what is used (Quantity.Sub builds 10^(10^9)) — is refused before
// anything parses it: the quota check names the quota and the field, and the list of quotas costs what it costs
// without it. 1e-10000000, whose parse alone allocates some 40 MB, bounds the cost first.
func TestHostileQuotaAmountsAreRefusedBeforeArithmetic(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addRawQuota("costly", "limits.memory", "1e-10000000", "0")
	withinBounds(t, 2<<20, func() {
		_, err := kube.List(context.Background(), fc.C, kube.ResourceQuotas, "default", metav1.ListOptions{})
		if err == nil || !strings.Contains(err.Error(), `ResourceQuota default/costly: spec.hard[limits.memory] "1e-10000000" has a decimal exponent beyond ±99`) {
			t.Errorf("the list of quotas: %v", err)
		}
	})

	for _, tc := range []struct{ hard, used, field string }{
		{"1e-1000000000", "0", "spec.hard[limits.memory]"},
		{"1e1000000000", "1Gi", "spec.hard[limits.memory]"},
		{"10Gi", "1E+1000000000", "status.used[limits.memory]"},
		{"1" + strings.Repeat("0", 100000), "0", "spec.hard[limits.memory]"},
	} {
		fc := newFakeCluster(t)
		fc.addRawQuota("hostile", "limits.memory", tc.hard, tc.used)
		var c preflight.Check
		withinBounds(t, 8<<20, func() { c = quotaCheckOf(t, fc, createOptions()) })
		if len(c.Problems) != 1 || c.Problems[0].Flag != "" ||
			!strings.Contains(c.Problems[0].Message, "cannot list the resource quotas of namespace default: Harvester") ||
			!strings.Contains(c.Problems[0].Message, " sent ResourceQuota default/hostile: "+tc.field) ||
			!strings.Contains(c.Problems[0].Message, "fix that object in Harvester") {
			t.Errorf("hard %.20s, used %.20s: %+v", tc.hard, tc.used, c)
		}
	}
}

// An amount in a quantity's form but beyond what one holds (2^63−1), or negative, which Kubernetes refuses in a
// quota, is named and that resource of that quota skipped: 8Ei would be read as 2^63−1, 100E as a number no
// int64 holds, and the rest of the quota is still checked.
func TestQuotaAmountsBeyondAQuantityAreSkipped(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addRawQuota("odd", "limits.memory", "100E", "0", "requests.storage", "8Ei", "1Gi", "limits.cpu", "-1", "0",
		"count/secrets", "1", "9223372036854775808")
	fc.addRawQuota("full", "count/virtualmachines.kubevirt.io", "9223372036854775807", "9223372036854775807")
	c := quotaCheckOf(t, fc, createOptions())
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].String(),
		"--harvester-vm-namespace: resource quota full in namespace default: count/virtualmachines.kubevirt.io has 0 free (9223372036854775807 of 9223372036854775807 used)") {
		t.Errorf("problems: %v", c.Problems)
	}
	configtest.WantAll(t, c.Skipped,
		"resource quota odd: status.hard[limits.memory] 100E is beyond what a Kubernetes quantity holds (2^63−1 in magnitude): not checked",
		"resource quota odd: status.hard[requests.storage] is more than 2^63−1 in magnitude (resource.ParseQuantity caps it there), which no Kubernetes quantity holds: not checked",
		"resource quota odd: status.hard[limits.cpu] -1 is negative, which Kubernetes refuses in a quota: not checked",
		"resource quota odd: status.used[count/secrets] 9223372036854775808 is beyond what a Kubernetes quantity holds (2^63−1 in magnitude): not checked")
}

// The memory request Harvester's mutator computes is limit × 100 / overcommit memory: 70 bits for the largest
// memory. From 85899346 GiB on that product wrapped in an int64 and the request came out negative, so the
// machine "fit" a 1 GiB quota on requests.
func TestQuotaMemoryRequestDoesNotWrap(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addSetting("overcommit-config", `{"cpu":1000,"memory":150,"storage":100}`, "")
	fc.addQuota("small", false, "requests.memory", "1Gi", "0")
	for _, gib := range []int{85899345, 85899346, config.MaxGiB} {
		c := quotaCheckOf(t, fc, configtest.With(createOptions(), config.FlagMemorySize, gib))
		if len(c.Problems) != 1 || c.Problems[0].Flag != config.FlagMemorySize || !strings.Contains(c.Problems[0].Message, "requests.memory has 1Gi free") {
			t.Errorf("%d GiB against a 1Gi quota on requests.memory: %+v", gib, c)
		}
	}
}

// Harvester refuses an overcommit below 100 ("Cannot undercommit": pkg/webhook/resources/setting/validator.go,
// validateOvercommitConfigHelper); a setting that holds one is not used, and a long value is not quoted whole.
func TestOvercommitBelowHundredIsNotUsed(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addQuota("compute", false, "requests.memory", "10Gi", "0")
	fc.addSetting("overcommit-config", "", `{"cpu":1000,"memory":1}`)
	if c := quotaCheckOf(t, fc, createOptions()); len(c.Problems) != 0 || !strings.Contains(c.Skipped, `setting overcommit-config holds no usable percentages ("{\"cpu\":1000,\"memory\":1}")`) {
		t.Errorf("overcommit memory 1: %+v", c)
	}
	fc.OK(kube.Update(context.Background(), fc.C, kube.Settings, "", &kube.Setting{ObjectMeta: metav1.ObjectMeta{Name: "overcommit-config"},
		Value: `{"cpu":1000,"memory":150,"x":"` + strings.Repeat("y", 1<<20) + `"}`}))
	if c := quotaCheckOf(t, fc, createOptions()); len(c.Problems) != 0 || c.Skipped != "" {
		t.Errorf("a long setting with usable percentages: %+v", c)
	}
	fc.OK(kube.Update(context.Background(), fc.C, kube.Settings, "", &kube.Setting{ObjectMeta: metav1.ObjectMeta{Name: "overcommit-config"},
		Value: strings.Repeat("y", 1<<20)}))
	if c := quotaCheckOf(t, fc, createOptions()); len(c.Skipped) > 300 || !strings.Contains(c.Skipped, "holds no usable percentages") {
		t.Errorf("a long setting without percentages: %.300s", c.Skipped)
	}
}

// Device counts: a host whose allocatable count no quantity holds is named and the count not made (100E would
// read as 0, and "none free" be a guess). (preflight's TestDeviceCountsPassingAnInt64: counts that together pass
// an int64 add up to its largest, not to a negative.)
func TestDeviceCountsAtTheBounds(t *testing.T) {
	// node1 has one device free, node2 a count no quantity holds: the machine fits on node1 whatever node2 has.
	fc := capacityCluster(t)
	kubefake.CaptureLog(t)
	n := kubefake.HostNode("node2", nil)
	n.Status.Allocatable[kubefake.GPUResource] = resource.MustParse("100E")
	fc.OK(kube.Create(context.Background(), fc.C, kube.Nodes, "", &n))
	devicesCheck := func() preflight.Check {
		return checkNamed(t, newTestDriver(t, fc, "m1", hostDeviceOptions(kubefake.GPUResource)), preflight.CheckHostDevices)
	}
	if c := devicesCheck(); len(c.Problems) != 0 || c.Skipped != "" {
		t.Errorf("a free device on node1 beside node2's 100E: %+v", c)
	}
	// With node1's device taken, whether node2 has one is not known: not counted, and said why.
	fc.addVMI(kubefake.DeviceVMI("default", "vm-a", "node1", kubevirtv1.Running, []string{kubefake.GPUResource}))
	if c := devicesCheck(); len(c.Problems) != 0 || !strings.Contains(c.Skipped,
		"nvidia.com/GA102GL_A10: the allocatable count of host node2 100E is beyond what a Kubernetes quantity holds (2^63−1 in magnitude): free devices not counted") {
		t.Errorf("node1's device taken, node2's count 100E: %+v", c)
	}
}

// The largest machines the flags take, for the largest pool, against a quota of 2^63−1 bytes: the storage need
// is refused with its true figure (preflight's TestQuotaNeedsAtTheBounds has every need's).
func TestQuotaNeedsAtTheBounds(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	opts := configtest.With(createOptions(), config.FlagCPUCount, config.MaxCPUs, config.FlagMemorySize, config.MaxGiB,
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/ubuntu","size":8589934591},{"storageClassName":"longhorn","size":8589934591}]}`)
	fc.addQuota("most", false, "requests.storage", "9223372036854775807", "0")
	d := newTestDriver(t, fc, "m1", opts)
	d.machines = preflight.MaxPoolSize
	if c := checkNamed(t, d, preflight.CheckQuota); len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Message, "requests.storage has 9223372036854775807 free (0 of 9223372036854775807 used), 1000 machines need 17179869182000Gi") {
		t.Errorf("storage of the largest pool against a quota of 2^63−1: %+v", c)
	}
}
