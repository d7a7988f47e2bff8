package preflight

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

// A range's first and last address as Harvester's load balancer reads them (allocator.go MakeRange).
func TestLBRangeOf(t *testing.T) {
	for _, tt := range []struct {
		r           kube.IPPoolRange
		first, last string // "" with err
		err         string
	}{
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24"}, first: "10.0.0.1", last: "10.0.0.254"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.77/24"}, first: "10.0.0.1", last: "10.0.0.254"}, // host bits: the subnet's
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.0.100"}, first: "10.0.0.100", last: "10.0.0.254"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeEnd: "10.0.0.20"}, first: "10.0.0.1", last: "10.0.0.20"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.0.200", RangeEnd: "10.0.0.100"}, first: "10.0.0.100", last: "10.0.0.200"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "::ffff:10.0.0.5", RangeEnd: "10.0.0.6"}, first: "10.0.0.5", last: "10.0.0.6"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.7/32"}, first: "10.0.0.7", last: "10.0.0.7"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.6/31"}, first: "10.0.0.6", last: "10.0.0.7"},
		{r: kube.IPPoolRange{Subnet: "2001:db8::/64"}, first: "2001:db8::1", last: "2001:db8::ffff:ffff:ffff:ffff"},
		{r: kube.IPPoolRange{Subnet: "2001:db8::/120", RangeStart: "2001:db8::10", RangeEnd: "2001:db8::1f"}, first: "2001:db8::10", last: "2001:db8::1f"},
		{r: kube.IPPoolRange{Subnet: "2001:db8::5/128"}, first: "2001:db8::5", last: "2001:db8::6"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", Gateway: "10.0.0.1"}, first: "10.0.0.1", last: "10.0.0.254"},

		{r: kube.IPPoolRange{Subnet: "10.0.0.0"}, err: `subnet "10.0.0.0" is not a CIDR`},
		{r: kube.IPPoolRange{Subnet: "::ffff:10.0.0.0/120"}, err: "is not a CIDR"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.1.5"}, err: "rangeStart: 10.0.1.5 is outside subnet 10.0.0.0/24"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "2001:db8::1"}, err: "rangeStart: 2001:db8::1 is outside subnet"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeStart: "10.0.0.0"}, err: "rangeStart: 10.0.0.0 is the network address"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeEnd: "10.0.0.255"}, err: "rangeEnd: 10.0.0.255 is the last address"},
		{r: kube.IPPoolRange{Subnet: "2001:db8::/120", RangeEnd: "2001:db8::ff"}, err: "rangeEnd: 2001:db8::ff is the last address"},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", RangeEnd: "ten"}, err: `rangeEnd: "ten" is not an IP address`},
		{r: kube.IPPoolRange{Subnet: "10.0.0.0/24", Gateway: "10.0.1.1"}, err: "gateway: 10.0.1.1 is outside subnet"},
	} {
		got, err := lbRangeOf(tt.r)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: %v, %v; want error %q", tt.r, got, err, tt.err)
			}
		case err != nil:
			t.Errorf("%+v: %v", tt.r, err)
		case got.First.String() != tt.first || got.Last.String() != tt.last:
			t.Errorf("%+v: %s-%s, want %s-%s", tt.r, got.First, got.Last, tt.first, tt.last)
		}
	}
}

func global(p kube.IPPool) kube.IPPool {
	p.Labels = map[string]string{kube.LabelGlobalIPPool: "true"}
	return p
}

func myRange(first, last string) *config.IPPool {
	return &config.IPPool{First: netip.MustParseAddr(first), Last: netip.MustParseAddr(last)}
}

// Which pools can serve the machine's network (default/vlan1, namespace team) and overlap its range, and where.
func TestLBOverlaps(t *testing.T) {
	const network, ns = "default/vlan1", "team"
	v4 := myRange("10.0.0.10", "10.0.0.59")
	v6 := myRange("2001:db8::10", "2001:db8::59")
	r := func(subnet, start, end string) kube.IPPoolRange {
		return kube.IPPoolRange{Subnet: subnet, RangeStart: start, RangeEnd: end}
	}
	for _, tt := range []struct {
		name string
		mine *config.IPPool
		pool kube.IPPool
		want string // "pool first-last" of each overlap, or "unusable: …"
	}{
		{"partial overlap", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "10.0.0.50", "10.0.0.99")), "lb 10.0.0.50-10.0.0.59"},
		{"the pool inside", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "10.0.0.20", "10.0.0.30")), "lb 10.0.0.20-10.0.0.30"},
		{"one address", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "10.0.0.1", "10.0.0.10")), "lb 10.0.0.10-10.0.0.10"},
		{"adjacent below", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "10.0.0.1", "10.0.0.9")), ""},
		{"adjacent above", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "10.0.0.60", "10.0.0.99")), ""},
		{"a subnet-only range", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "", "")), "lb 10.0.0.10-10.0.0.59"},
		{"a /32", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.33/32", "", "")), "lb 10.0.0.33-10.0.0.33"},
		{"another subnet", v4, kubefake.LBPool("lb", network, nil, r("10.0.1.0/24", "", "")), ""},
		{"several ranges", v4, kubefake.LBPool("lb", network, nil, r("10.0.0.0/24", "10.0.0.1", "10.0.0.12"), r("10.0.1.0/24", "", ""), r("10.0.0.0/24", "10.0.0.58", "10.0.0.70")),
			"lb 10.0.0.10-10.0.0.12, lb 10.0.0.58-10.0.0.59"},
		{"IPv6 partial", v6, kubefake.LBPool("lb6", network, nil, r("2001:db8::/64", "2001:db8::50", "2001:db8::ff")), "lb6 2001:db8::50-2001:db8::59"},
		{"IPv6 subnet-only", v6, kubefake.LBPool("lb6", network, nil, r("2001:db8::/120", "", "")), "lb6 2001:db8::10-2001:db8::59"},
		{"IPv6 adjacent", v6, kubefake.LBPool("lb6", network, nil, r("2001:db8::/64", "2001:db8::5a", "2001:db8::ff")), ""},
		{"another family", v4, kubefake.LBPool("lb6", network, nil, r("2001:db8::/64", "", "")), ""},
		{"another network", v4, kubefake.LBPool("lb", "default/vlan2", []string{"*"}, r("10.0.0.0/24", "", "")), ""},
		{"this network, another namespace's scope", v4, kubefake.LBPool("lb", network, []string{"other"}, r("10.0.0.0/24", "", "")), "lb 10.0.0.10-10.0.0.59"},
		{"the global pool, another network", v4, global(kubefake.LBPool("g", "default/vlan2", nil, r("10.0.0.0/24", "", ""))), "g 10.0.0.10-10.0.0.59"},
		{"no network, the namespace's scope", v4, kubefake.LBPool("vm", "", []string{ns}, r("10.0.0.0/24", "", "")), "vm 10.0.0.10-10.0.0.59"},
		{"no network, any namespace", v4, kubefake.LBPool("vm", "", []string{"other", "*"}, r("10.0.0.0/24", "", "")), "vm 10.0.0.10-10.0.0.59"},
		{"no network, another namespace", v4, kubefake.LBPool("vm", "", []string{"other"}, r("10.0.0.0/24", "", "")), ""},
		{"no network, no scope", v4, kubefake.LBPool("vm", "", nil, r("10.0.0.0/24", "", "")), ""},
		{"a range the load balancer refuses", v4, kubefake.LBPool("bad", network, nil, r("10.0.0.0/24", "", ""), r("10.0.0.0/24", "10.0.9.1", "")),
			"unusable: pool bad: range 2: rangeStart: 10.0.9.1 is outside subnet 10.0.0.0/24"},
	} {
		overlaps, unusable := lbOverlaps([]kube.IPPool{tt.pool}, tt.mine, network, ns)
		var got []string
		for _, o := range overlaps {
			got = append(got, fmt.Sprintf("%s %s-%s", o.Pool, o.First, o.Last))
		}
		for _, u := range unusable {
			got = append(got, "unusable: "+u)
		}
		if g := strings.Join(got, ", "); g != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, g, tt.want)
		}
	}
}

// Overlaps come by pool name, each saying why its pool serves the machine's network.
func TestLBOverlapsOrderAndWhy(t *testing.T) {
	all := kube.IPPoolRange{Subnet: "10.0.0.0/24"}
	pools := []kube.IPPool{kubefake.LBPool("z-net", "default/vlan1", nil, all), kubefake.LBPool("m-ns", "", []string{"team"}, all), global(kubefake.LBPool("a-global", "", nil, all))}
	overlaps, _ := lbOverlaps(pools, myRange("10.0.0.10", "10.0.0.11"), "default/vlan1", "team")
	var got []string
	for _, o := range overlaps {
		got = append(got, o.Pool+": "+o.Why)
	}
	want := []string{
		"a-global: it is the global pool (label loadbalancer.harvesterhci.io/global-ip-pool=true), which serves every network without a pool of its own",
		"m-ns: it serves load balancers of namespace team and names no network",
		"z-net: it serves network default/vlan1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("overlaps:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
