package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

func (fc *fakeCluster) addLBPool(pool kube.IPPool) {
	fc.OK(kube.Create(context.Background(), fc.C, kube.IPPools, "", &pool))
}

// lbPoolCheck runs the pre-flight of machine m1 with --harvester-ip-pool 10.0.0.10-10.0.0.11/24 on network
// default/vlan1 (namespace default) and returns its load-balancer pools check, and the requests made for pools.
func lbPoolCheck(t *testing.T, fc *fakeCluster) (preflight.Check, []k8stesting.Action) {
	t.Helper()
	return lbPoolCheckOf(t, fc, "10.0.0.10-10.0.0.11/24")
}

// lbPoolCheckOf is lbPoolCheck with --harvester-ip-pool pool.
func lbPoolCheckOf(t *testing.T, fc *fakeCluster, pool string) (preflight.Check, []k8stesting.Action) {
	t.Helper()
	d := newTestDriver(t, fc, "m1", poolCreateOptions(pool))
	fc.Dyn.ClearActions()
	var found *preflight.Check
	for _, c := range d.preflight(context.Background(), nil).Checks {
		if c.Name == preflight.CheckLBPools {
			found = &c
		}
	}
	if found == nil {
		t.Fatalf("no %q check", preflight.CheckLBPools)
	}
	var reads []k8stesting.Action
	for _, a := range fc.Dyn.Actions() {
		if a.GetResource().Resource == "ippools" {
			reads = append(reads, a)
		}
	}
	return *found, reads
}

// A range overlapping a pool of the machine's network is refused before anything is made, naming the pool, the
// overlap, the pool's range and what to change; the pools are read with one list.
func TestPreCreateCheckLBPoolOverlap(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addLBPool(kubefake.LBPool("guests", "default/vlan1", []string{"*"}, kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.0.11", RangeEnd: "10.0.0.40"}))
	fc.addLBPool(kubefake.LBPool("elsewhere", "default/vlan2", []string{"*"}, kube.IPPoolRange{Subnet: "10.0.0.0/24"}))
	c, reads := lbPoolCheck(t, fc)
	want := "10.0.0.10-10.0.0.11 overlaps load-balancer IP pool guests at 10.0.0.11 (its range 10.0.0.11-10.0.0.40 of subnet 10.0.0.0/24; it serves network default/vlan1): " +
		"Harvester's load balancer could give those addresses to a Service while a node holds them; give --harvester-ip-pool a range outside 10.0.0.11-10.0.0.40, " +
		"or change the pool's ranges in Harvester (Networks → IP Pools)"
	if len(c.Problems) != 1 || c.Problems[0].Flag != "harvester-ip-pool" || c.Problems[0].Message != want || c.Skipped != "" {
		t.Errorf("check %+v\nwant the one problem %q", c, want)
	}
	if len(reads) != 1 || reads[0].GetVerb() != "list" { // from the watch cache: the scenario sees the query
		t.Errorf("requests for pools: %v, want one list", reads)
	}

	err := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24")).PreCreateCheck()
	if err == nil || !strings.Contains(err.Error(), "--harvester-ip-pool: "+want) {
		t.Errorf("PreCreateCheck: %v\nwant %q", err, want)
	}
	fc.nothingLeft(t)
}

// Both ranges of a dual-stack pool are checked: an IPv6 range inside a load-balancer pool is refused even when
// the IPv4 range overlaps nothing, and with one list of the pools.
func TestPreCreateCheckLBPoolOverlapDualStack(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addLBPool(kubefake.LBPool("v6", "default/vlan1", []string{"*"}, kube.IPPoolRange{Subnet: "2001:db8::/64", RangeStart: "2001:db8::20", RangeEnd: "2001:db8::40"}))
	c, reads := lbPoolCheckOf(t, fc, "10.0.0.10-10.0.0.11/24,2001:db8::10-2001:db8::20/64")
	if len(c.Problems) != 1 || !strings.HasPrefix(c.Problems[0].Message, "2001:db8::10-2001:db8::20 overlaps load-balancer IP pool v6 at 2001:db8::20 (its range 2001:db8::20-2001:db8::40") {
		t.Errorf("check %+v\nwant the IPv6 range refused", c)
	}
	if len(reads) != 1 {
		t.Errorf("requests for pools: %v, want one list", reads)
	}
}

// Pools of another network, or overlapping nothing, let the machine through.
func TestPreCreateCheckLBPoolElsewhere(t *testing.T) {
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.addLBPool(kubefake.LBPool("elsewhere", "default/vlan2", []string{"*"}, kube.IPPoolRange{Subnet: "10.0.0.0/24"}))
	fc.addLBPool(kubefake.LBPool("beside", "default/vlan1", []string{"*"}, kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.0.12", RangeEnd: "10.0.0.40"}))
	if c, _ := lbPoolCheck(t, fc); len(c.Problems) != 0 || c.Skipped != "" {
		t.Errorf("check %+v, want ok", c)
	}
	if err := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24")).PreCreateCheck(); err != nil {
		t.Errorf("PreCreateCheck: %v", err)
	}
}

// A credential that may not list the pools, and a Harvester that serves none, leave the check skipped with why;
// another failure of the list is a problem; without --harvester-ip-pool nothing is read.
func TestPreCreateCheckLBPoolNotRead(t *testing.T) {
	gr := schema.GroupResource{Group: kube.LoadBalancerGroupVersion.Group, Resource: "ippools"}
	for _, tt := range []struct {
		name          string
		err           error
		skipped, flaw string
	}{
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New("no")),
			"the credential may not list ippools.loadbalancer.harvesterhci.io: cannot tell whether --harvester-ip-pool overlaps a load-balancer IP pool", ""},
		{"not served", apierrors.NewGenericServerResponse(404, "list", gr, "", "", 0, false),
			"Harvester serves no loadbalancer.harvesterhci.io/v1beta1 IP pools (before Harvester v1.2 load-balancer ranges are in ConfigMap kube-system/kubevip): cannot tell whether --harvester-ip-pool overlaps one", ""},
		{"failed", apierrors.NewInternalError(errors.New("etcd is away")), "", "list the load-balancer IP pools to check"},
	} {
		fc := newFakeCluster(t)
		kubefake.CaptureLog(t)
		fc.addLBPool(kubefake.LBPool("guests", "default/vlan1", nil, kube.IPPoolRange{Subnet: "10.0.0.0/24"})) // never read
		fc.Dyn.PrependReactor("list", "ippools", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tt.err })
		c, _ := lbPoolCheck(t, fc)
		var problems []string
		for _, p := range c.Problems {
			problems = append(problems, p.String())
		}
		if c.Skipped != tt.skipped || (tt.flaw == "") != (len(problems) == 0) || !strings.Contains(strings.Join(problems, "\n"), tt.flaw) {
			t.Errorf("%s: skipped %q, problems %q; want skipped %q, a problem with %q", tt.name, c.Skipped, problems, tt.skipped, tt.flaw)
		}
		err := newTestDriver(t, fc, "m1", poolCreateOptions("10.0.0.10-10.0.0.11/24")).PreCreateCheck()
		if (err == nil) != (tt.flaw == "") {
			t.Errorf("%s: PreCreateCheck: %v", tt.name, err)
		}
	}

	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	d := newTestDriver(t, fc, "m1", createOptions())
	fc.Dyn.ClearActions()
	for _, c := range d.preflight(context.Background(), nil).Checks {
		if c.Name == preflight.CheckLBPools && (c.Skipped != "--harvester-ip-pool and --harvester-ip-pool-name not given" || len(c.Problems) > 0) {
			t.Errorf("without a pool: %+v", c)
		}
	}
	for _, a := range fc.Dyn.Actions() {
		if a.GetResource().Resource == "ippools" {
			t.Errorf("without a pool the pre-flight read pools: %v", a)
		}
	}
}
