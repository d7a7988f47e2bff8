package config_test

import (
	"net/netip"
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// A dual-stack pool: one range of each family, in either order, IPv4 first in the config; each gateway goes to
// its family's range, and the DNS servers of both families to both (each range sets aside the ones inside it).
func TestParseDualStackIPPool(t *testing.T) {
	for _, order := range []string{
		"10.0.0.10-10.0.0.12/24, 2001:db8::10-2001:db8::12/64",
		"2001:db8::10-2001:db8::12/64,10.0.0.10-10.0.0.12/24",
	} {
		t.Run(order, func(t *testing.T) {
			cfg, err := ParseConfig("m1", poolOptions(FlagIPPool, order,
				FlagIPPoolGateway, "2001:db8::1, 10.0.0.1", FlagIPPoolDNS, "10.0.0.11,2001:db8::53", FlagIPPoolDNSSearch, "example.com"))
			if err != nil {
				t.Fatal(err)
			}
			v4, v6 := cfg.IPPool, cfg.IPPool6
			if v4 == nil || v6 == nil || v4.String() != "10.0.0.10-10.0.0.12/24" || v6.String() != "2001:db8::10-2001:db8::12/64" {
				t.Fatalf("pools %v and %v, want the IPv4 range then the IPv6 one", v4, v6)
			}
			if v4.Gateway.String() != "10.0.0.1" || v6.Gateway.String() != "2001:db8::1" {
				t.Errorf("gateways %v and %v", v4.Gateway, v6.Gateway)
			}
			for _, p := range cfg.IPPools() {
				if got := addrStrings(p.DNS); got != "10.0.0.11 2001:db8::53" || strings.Join(p.Search, " ") != "example.com" {
					t.Errorf("%v: DNS %q search %v", p, got, p.Search)
				}
			}
			if v4.Size().String() != "2" || v4.FirstFree().String() != "10.0.0.10" || v6.Size().String() != "3" {
				t.Errorf("sizes %v and %v, first %v: the IPv4 DNS server inside the range is set aside", v4.Size(), v6.Size(), v4.FirstFree())
			}
			if cfg.IPPoolOf(v6.First) != v6 || cfg.IPPoolOf(v4.Last) != v4 {
				t.Error("IPPoolOf does not find each address's range")
			}
		})
	}
	cfg, err := ParseConfig("m1", poolOptions(FlagIPPool, "2001:db8::10-2001:db8::12/64"))
	if err != nil || cfg.IPPool == nil || cfg.IPPool6 != nil || len(cfg.IPPools()) != 1 {
		t.Fatalf("a single IPv6 range is IPPool alone: %v %+v", err, cfg)
	}
}

func TestParseDualStackIPPoolRefuses(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"two IPv4 ranges", poolOptions(FlagIPPool, "10.0.0.10-10.0.0.12/24,10.0.1.0/24"), []string{
			"--harvester-ip-pool: gives two IPv4 ranges (10.0.0.10-10.0.0.12/24 and 10.0.1.1-10.0.1.254/24); a machine gets one address of each family: give one IPv4 and one IPv6 range at most"}},
		{"two IPv6 ranges", poolOptions(FlagIPPool, "2001:db8::/112,2001:db8:1::/112"), []string{"--harvester-ip-pool: gives two IPv6 ranges"}},
		{"three ranges", poolOptions(FlagIPPool, "10.0.0.0/24,2001:db8::/112,10.0.1.0/24"), []string{
			"--harvester-ip-pool: gives 3 ranges; give one, or two for a dual-stack NIC: one IPv4 and one IPv6 range, comma-separated"}},
		{"one of two ranges wrong", poolOptions(FlagIPPool, "10.0.0.0/24,2001:db8::-2001:db8::9/64"), []string{
			"--harvester-ip-pool: item 2: \"2001:db8::-2001:db8::9/64\": the range holds 2001:db8::, the subnet-router anycast address"}},
		{"two gateways of one family", poolOptions(FlagIPPool, "10.0.0.0/24,2001:db8::/112", FlagIPPoolGateway, "10.0.0.1,10.0.0.254"), []string{
			"--harvester-ip-pool-gateway: gives two IPv4 gateways (10.0.0.1 and 10.0.0.254); give at most one of each family"}},
		{"gateway of a family without a range", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolGateway, "10.0.0.1,2001:db8::1"), []string{
			"--harvester-ip-pool-gateway: 2001:db8::1 is an IPv6 address, the pool's are IPv4"}},
		{"gateway outside its family's range", poolOptions(FlagIPPool, "10.0.0.0/24,2001:db8::/112", FlagIPPoolGateway, "10.0.0.1,2001:db9::1"), []string{
			"--harvester-ip-pool-gateway: the gateway 2001:db9::1 is outside the pool's subnet 2001:db8::/112"}},
		{"no range, only commas", poolOptions(FlagIPPool, " , ", FlagIPPoolGateway, ","), []string{
			`--harvester-ip-pool: must be FIRST-LAST/PREFIX`, `got ","`, `--harvester-ip-pool-gateway: "," is not an IP address`}},
		{"gateway not an address", poolOptions(FlagIPPool, "10.0.0.0/24,2001:db8::/112", FlagIPPoolGateway, "10.0.0.1,gw"), []string{
			`--harvester-ip-pool-gateway: item 2: "gw" is not an IP address`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantRefused(t, tt.opts, tt.want...) })
	}
}

func addrStrings(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, " ")
}
