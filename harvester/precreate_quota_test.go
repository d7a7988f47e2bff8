package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// addQuota makes a ResourceQuota in namespace default as the quota controller leaves it: hard and used, given as
// resource, hard, used triples.
func (fc *fakeCluster) addQuota(name string, scoped bool, hardUsed ...string) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{}, Used: corev1.ResourceList{}}}
	for i := 0; i < len(hardUsed); i += 3 {
		res := corev1.ResourceName(hardUsed[i])
		q.Status.Hard[res] = resource.MustParse(hardUsed[i+1])
		if hardUsed[i+2] != "" {
			q.Status.Used[res] = resource.MustParse(hardUsed[i+2])
		}
	}
	q.Spec.Hard = q.Status.Hard.DeepCopy()
	if scoped {
		q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}
	}
	fc.OK(kube.Create(context.Background(), fc.C, kube.ResourceQuotas, "default", q))
}

// The machine (2 cores, 4 GiB, one 40 GiB disk of class longhorn-ubuntu) against the quotas of its namespace: a
// quota it certainly does not fit refuses it, naming the quota, the resource, what is free and what it needs;
// what it fits (requests under Harvester's default overcommit: 200m and 2730Mi) and scoped quotas do not.
func TestPreCreateCheckQuota(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addSetting("overcommit-config", `{"cpu":1000,"memory":150,"storage":100}`, "")
	fc.addQuota("storage", false, "requests.storage", "50Gi", "20Gi", "count/secrets", "10", "2")
	fc.addQuota("compute", false, "limits.cpu", "4", "3", "limits.memory", "100Gi", "10Gi", "requests.cpu", "1", "0", "requests.memory", "3Gi", "0")
	fc.addQuota("class", false, "longhorn-ubuntu.storageclass.storage.k8s.io/persistentvolumeclaims", "3", "3",
		"longhorn.storageclass.storage.k8s.io/persistentvolumeclaims", "0", "0")
	fc.addQuota("objects", false, "count/virtualmachines.kubevirt.io", "5", "5", "pods", "10", "")
	fc.addQuota("scoped", true, "limits.cpu", "1", "1")
	err := newTestDriver(t, fc, "m1", createOptions()).PreCreateCheck()
	var cerr *config.ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want the quotas' problems, got %v", err)
	}
	want := []string{
		"--harvester-disk-size: resource quota storage in namespace default: requests.storage has 30Gi free (20Gi of 50Gi used), the machine needs 40Gi (the sum of its disks' sizes)",
		"--harvester-cpu-count: resource quota compute in namespace default: limits.cpu has 1 free (3 of 4 used), the machine needs 2 (its cores)",
		"--harvester-disk-size: resource quota class in namespace default: longhorn-ubuntu.storageclass.storage.k8s.io/persistentvolumeclaims has 0 free (3 of 3 used), the machine needs 1",
		"--harvester-vm-namespace: resource quota objects in namespace default: count/virtualmachines.kubevirt.io has 0 free (5 of 5 used), the machine needs 1 (its VM)",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no %q in:\n%v", w, err)
		}
	}
	if len(cerr.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(cerr.Problems), len(want), err)
	}

	// With dedicated CPUs the requests are the limits.
	d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagCPUPinning, true))
	if err := d.PreCreateCheck(); err == nil || !strings.Contains(err.Error(), "requests.cpu has 1 free (0 of 1 used), the machine needs 2 (its dedicated cores)") {
		t.Errorf("CPU pinning: %v", err)
	}

	// A quota not counted yet (no used) is skipped, not guessed.
	var pods preflight.Check
	for _, c := range newTestDriver(t, fc, "m1", createOptions()).preflight(context.Background(), nil).Checks {
		if c.Name == preflight.CheckQuota {
			pods = c
		}
	}
	if !strings.Contains(pods.Skipped, "resource quota objects has not counted pods yet") {
		t.Errorf("quota check: %+v", pods)
	}
}

// A machine that fits passes; a credential that may not list quotas is not blocked, and the check says so.
func TestPreCreateCheckQuotaFitsOrCannotTell(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addQuota("roomy", false, "requests.storage", "40Gi", "0", "limits.cpu", "2", "0", "limits.memory", "4Gi", "0", "count/secrets", "1", "0")
	if err := newTestDriver(t, fc, "m1", createOptions()).PreCreateCheck(); err != nil {
		t.Errorf("a machine that just fits: %v", err)
	}
	fc.addQuota("full", false, "count/secrets", "1", "1")
	fc.FailOn("list", "resourcequotas", apierrors.NewForbidden(schema.GroupResource{Resource: "resourcequotas"}, "", errors.New("no")))
	d := newTestDriver(t, fc, "m1", createOptions())
	for _, c := range d.preflight(context.Background(), nil).Checks {
		if c.Name == preflight.CheckQuota && (len(c.Problems) > 0 || c.Skipped != "the credential may not list resourcequotas in namespace default: cannot tell whether the machine fits its quotas") {
			t.Errorf("quota check without the right to list: %+v", c)
		}
	}
	fc.FailOn("list", "resourcequotas", apierrors.NewForbidden(schema.GroupResource{Resource: "resourcequotas"}, "", errors.New("no")))
	if err := d.PreCreateCheck(); err != nil {
		t.Errorf("blocked by a list it may not make: %v", err)
	}
}
