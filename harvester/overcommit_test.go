package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// addSetting makes a Harvester Setting with a default and a value.
func (fc *fakeCluster) addSetting(name, def, value string) {
	fc.OK(kube.Create(context.Background(), fc.C, kube.Settings, "", &kube.Setting{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Default: def, Value: value}))
}

// A quota on requests is checked against the mutator's figures under the cluster's overcommit-config (its value,
// else its default); without the setting, with one the credential may not read, or with nonsense in it, the
// requests are skipped with the reason, and the rest of the check goes on.
func TestPreCreateCheckQuotaRequests(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addQuota("compute", false, "requests.cpu", "10", "9900m", "requests.memory", "10Gi", "8Gi", "limits.cpu", "2", "0")
	quotaCheck := func() preflight.Check {
		t.Helper()
		return quotaCheckOf(t, fc, createOptions())
	}
	if c := quotaCheck(); len(c.Problems) != 0 || c.Skipped != "Harvester has no setting overcommit-config: CPU and memory requests not checked" {
		t.Errorf("without the setting: %+v", c)
	}

	fc.addSetting("overcommit-config", `{"cpu":1000,"memory":150,"storage":100}`, "")
	c := quotaCheck()
	want := []string{
		"--harvester-cpu-count: resource quota compute in namespace default: requests.cpu has 100m free (9900m of 10 used), the machine needs 200m (its CPU request: 2 cores × 100 / overcommit-config cpu 1000)",
		"--harvester-memory-size: resource quota compute in namespace default: requests.memory has 2Gi free (8Gi of 10Gi used), the machine needs 2730Mi (its memory request: 4Gi × 100 / overcommit-config memory 150, in whole MiB)",
	}
	if len(c.Problems) != len(want) || c.Skipped != "" {
		t.Fatalf("with the default setting: %+v", c)
	}
	for i, w := range want {
		if !strings.HasPrefix(c.Problems[i].String(), w) {
			t.Errorf("problem %d: %s\nwant %s", i, c.Problems[i], w)
		}
	}

	// An administrator's value wins over the default: 4Gi × 100 / 200 = 2Gi fits, 2 × 100 / 2000 = 100m too.
	fc.OK(kube.Update(context.Background(), fc.C, kube.Settings, "", &kube.Setting{ObjectMeta: metav1.ObjectMeta{Name: "overcommit-config"},
		Default: `{"cpu":1000,"memory":150,"storage":100}`, Value: `{"cpu":2000,"memory":200,"storage":100}`}))
	if c := quotaCheck(); len(c.Problems) != 0 || c.Skipped != "" {
		t.Errorf("with overcommit 2000/200: %+v", c)
	}

	fc.FailOn("get", "settings", apierrors.NewForbidden(schema.GroupResource{Group: "harvesterhci.io", Resource: "settings"}, "overcommit-config", errors.New("no")))
	if c := quotaCheck(); len(c.Problems) != 0 || c.Skipped != "the credential may not get setting overcommit-config: CPU and memory requests not checked" {
		t.Errorf("a setting the credential may not read: %+v", c)
	}
	fc.OK(kube.Update(context.Background(), fc.C, kube.Settings, "", &kube.Setting{ObjectMeta: metav1.ObjectMeta{Name: "overcommit-config"},
		Value: `{"cpu":0}`}))
	if c := quotaCheck(); len(c.Problems) != 0 || !strings.Contains(c.Skipped, `setting overcommit-config holds no usable percentages ("{\"cpu\":0}")`) {
		t.Errorf("a setting without percentages: %+v", c)
	}
}

// The setting is read only when some unscoped quota limits requests: one cached get, no read otherwise.
func TestQuotaReadsSettingOnlyForRequests(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addSetting("overcommit-config", `{"cpu":1000,"memory":150,"storage":100}`, "")
	reads := func() (n int) {
		for _, a := range fc.Dyn.Actions() {
			if a.GetResource().Resource == "settings" {
				if a.GetVerb() != "get" {
					t.Errorf("%s settings", a.GetVerb())
				}
				n++
			}
		}
		return n
	}
	fc.addQuota("limits", false, "limits.cpu", "10", "0")
	fc.addQuota("scoped", true, "requests.cpu", "10", "0")
	fc.Dyn.ClearActions()
	if err := newTestDriver(t, fc, "m1", createOptions()).PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 0 {
		t.Errorf("%d reads of settings without a quota on requests", n)
	}
	fc.addQuota("requests", false, "memory", "100Gi", "0")
	fc.Dyn.ClearActions()
	if err := newTestDriver(t, fc, "m1", createOptions()).PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 1 {
		t.Errorf("%d reads of settings with a quota on memory, want 1", n)
	}
}
