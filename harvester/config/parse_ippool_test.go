package config_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func poolOptions(kv ...any) Options {
	return configtest.With(configtest.MinimalOptions(), kv...)
}

func TestParseIPPool(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		first, last string
		bits        int
		size        string
		gateway     string
		dns         []string
		addresses   []string // the first few given out
	}{
		{name: "IPv4 range", opts: poolOptions(FlagIPPool, "10.0.0.10-10.0.0.12/24", FlagIPPoolGateway, "10.0.0.1", FlagIPPoolDNS, "10.0.0.2, 1.1.1.1"),
			first: "10.0.0.10", last: "10.0.0.12", bits: 24, size: "3", gateway: "10.0.0.1", dns: []string{"10.0.0.2", "1.1.1.1"},
			addresses: []string{"10.0.0.10", "10.0.0.11", "10.0.0.12"}},
		// The gateway and the DNS servers inside the range are never given out.
		{name: "IPv4 range around its gateway", opts: poolOptions(FlagIPPool, " 10.0.0.1-10.0.0.4/29 ", FlagIPPoolGateway, "10.0.0.2", FlagIPPoolDNS, "10.0.0.3"),
			first: "10.0.0.1", last: "10.0.0.4", bits: 29, size: "2", gateway: "10.0.0.2", dns: []string{"10.0.0.3"}, addresses: []string{"10.0.0.1", "10.0.0.4"}},
		// A DNS server that is also the gateway is set aside once.
		{name: "IPv4 range, gateway serves DNS", opts: poolOptions(FlagIPPool, "10.0.0.1-10.0.0.3/24", FlagIPPoolGateway, "10.0.0.1", FlagIPPoolDNS, "10.0.0.1"),
			first: "10.0.0.1", last: "10.0.0.3", bits: 24, size: "2", gateway: "10.0.0.1", dns: []string{"10.0.0.1"}, addresses: []string{"10.0.0.2", "10.0.0.3"}},
		// A subnet gives out everything but its network and broadcast addresses and its gateway.
		{name: "IPv4 subnet", opts: poolOptions(FlagIPPool, "192.168.5.0/24", FlagIPPoolGateway, "192.168.5.1"),
			first: "192.168.5.1", last: "192.168.5.254", bits: 24, size: "253", gateway: "192.168.5.1", addresses: []string{"192.168.5.2", "192.168.5.3"}},
		{name: "IPv4 /31 (RFC 3021)", opts: poolOptions(FlagIPPool, "192.168.5.0/31"),
			first: "192.168.5.0", last: "192.168.5.1", bits: 31, size: "2", addresses: []string{"192.168.5.0", "192.168.5.1"}},
		{name: "IPv6 range", opts: poolOptions(FlagIPPool, "2001:db8::10-2001:db8::12/64", FlagIPPoolGateway, "2001:db8::1", FlagIPPoolDNS, "2001:db8::53"),
			first: "2001:db8::10", last: "2001:db8::12", bits: 64, size: "3", gateway: "2001:db8::1", dns: []string{"2001:db8::53"},
			addresses: []string{"2001:db8::10", "2001:db8::11"}},
		// A /64 is 2^64 addresses; none of them is listed in memory. The subnet-router anycast address is skipped.
		{name: "IPv6 subnet", opts: poolOptions(FlagIPPool, "2001:db8:0:5::/112"),
			first: "2001:db8:0:5::1", last: "2001:db8:0:5::ffff", bits: 112, size: "65535",
			addresses: []string{"2001:db8:0:5::1", "2001:db8:0:5::2"}},
		// A range of a /64 is fine as long as it is no larger than MaxPoolSize.
		{name: "IPv6 range of a /64", opts: poolOptions(FlagIPPool, "2001:db8:0:5::1-2001:db8:0:5::1:0/64"),
			first: "2001:db8:0:5::1", last: "2001:db8:0:5::1:0", bits: 64, size: "65536",
			addresses: []string{"2001:db8:0:5::1", "2001:db8:0:5::2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("m1", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			p := cfg.IPPool
			if p == nil || p.First.String() != tt.first || p.Last.String() != tt.last || p.Subnet.Bits() != tt.bits || p.Size().String() != tt.size {
				t.Fatalf("pool %+v (size %v), want %s-%s/%d of %s", p, p.Size(), tt.first, tt.last, tt.bits, tt.size)
			}
			if got := addrString(p.Gateway); got != tt.gateway {
				t.Errorf("gateway %q, want %q", got, tt.gateway)
			}
			var dns []string
			for _, a := range p.DNS {
				dns = append(dns, a.String())
			}
			if strings.Join(dns, " ") != strings.Join(tt.dns, " ") {
				t.Errorf("DNS %v, want %v", dns, tt.dns)
			}
			var got []string
			p.Addresses(func(a netip.Addr) bool { got = append(got, a.String()); return len(got) < len(tt.addresses) })
			if strings.Join(got, " ") != strings.Join(tt.addresses, " ") {
				t.Errorf("addresses %v, want %v", got, tt.addresses)
			}
		})
	}
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// wantRefused parses opts and wants a ConfigError holding every text of want.
func wantRefused(t *testing.T, opts Options, want ...string) {
	t.Helper()
	_, err := ParseConfig("m1", opts)
	var cerr *ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("want a ConfigError, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

func TestParseIPPoolRefuses(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"not a range", poolOptions(FlagIPPool, "10.0.0.10..10.0.0.20"), []string{
			`--harvester-ip-pool: must be FIRST-LAST/PREFIX (e.g. 10.0.0.10-10.0.0.59/24 or 2001:db8::10-2001:db8::59/64) or a subnet (e.g. 10.0.0.0/24), got "10.0.0.10..10.0.0.20": the prefix length is missing`}},
		{"bad ends and prefix", poolOptions(FlagIPPool, "10.0.0.300-host/x"), []string{
			`--harvester-ip-pool: must be FIRST-LAST/PREFIX`, `FIRST: "10.0.0.300" is not an IP address`, `LAST: "host" is not an IP address`, `PREFIX "x" is not a prefix length`}},
		{"last before first", poolOptions(FlagIPPool, "10.0.0.20-10.0.0.10/24"), []string{
			`--harvester-ip-pool: "10.0.0.20-10.0.0.10/24": LAST 10.0.0.10 comes before FIRST 10.0.0.20`}},
		{"families mixed", poolOptions(FlagIPPool, "10.0.0.1-2001:db8::1/24"), []string{
			`--harvester-ip-pool: "10.0.0.1-2001:db8::1/24": FIRST 10.0.0.1 is an IPv4 address and LAST 2001:db8::1 an IPv6 one`}},
		{"prefix too long", poolOptions(FlagIPPool, "10.0.0.1-10.0.0.2/33"), []string{"PREFIX must be a prefix length from 0 to 32 for IPv4, got 33"}},
		{"range across subnets", poolOptions(FlagIPPool, "10.0.0.10-10.0.1.10/24"), []string{"LAST 10.0.1.10 is outside the subnet 10.0.0.0/24 of FIRST"}},
		{"range holds the broadcast address", poolOptions(FlagIPPool, "10.0.0.10-10.0.0.255/24"), []string{
			"the range holds 10.0.0.255, the network or broadcast address of 10.0.0.0/24, which no machine can use"}},
		{"IPv6 range holds the subnet-router anycast address", poolOptions(FlagIPPool, "2001:db8::-2001:db8::9/64"), []string{
			"the range holds 2001:db8::, the subnet-router anycast address of 2001:db8::/64"}},
		{"IPv6 gateway is the subnet-router anycast address", poolOptions(FlagIPPool, "2001:db8::10-2001:db8::20/64", FlagIPPoolGateway, "2001:db8::"), []string{
			"--harvester-ip-pool-gateway: the gateway 2001:db8:: is the subnet-router anycast address of 2001:db8::/64"}},
		{"address, not subnet", poolOptions(FlagIPPool, "10.0.0.5/24"), []string{
			"10.0.0.5/24 is an address in subnet 10.0.0.0/24, not a subnet: write the subnet, or a range of one address as 10.0.0.5-10.0.0.5/24"}},
		{"gateway elsewhere, DNS of the other family", poolOptions(FlagIPPool, "10.0.0.10-10.0.0.20/24", FlagIPPoolGateway, "10.1.0.1", FlagIPPoolDNS, "1.1.1.1,2001:db8::53,dns.example"), []string{
			"--harvester-ip-pool-gateway: the gateway 10.1.0.1 is outside the pool's subnet 10.0.0.0/24: the machines could not reach it",
			"--harvester-ip-pool-dns: 2001:db8::53 is an IPv6 address, the pool's are IPv4",
			`--harvester-ip-pool-dns: server 3: "dns.example" is not an IP address`}},
		{"gateway of the other family", poolOptions(FlagIPPool, "2001:db8::10-2001:db8::20/64", FlagIPPoolGateway, "10.0.0.1"), []string{
			"--harvester-ip-pool-gateway: 10.0.0.1 is an IPv4 address, the pool's are IPv6"}},
		{"nothing left to give out", poolOptions(FlagIPPool, "10.0.0.1-10.0.0.1/24", FlagIPPoolGateway, "10.0.0.1"), []string{
			"--harvester-ip-pool: 10.0.0.1-10.0.0.1/24 has no address left to give out once its gateway and DNS servers are set aside"}},
		// Only unicast addresses a node can hold, and at most MaxPoolSize of them.
		{"the whole IPv4 space", poolOptions(FlagIPPool, "0.0.0.0/0"), []string{
			`--harvester-ip-pool: 0.0.0.1-255.255.255.254 reaches into "this network" (0.0.0.0/8, unspecified), which no node can be given`}},
		{"the whole IPv6 space", poolOptions(FlagIPPool, "::/0"), []string{"--harvester-ip-pool: ::1-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff reaches into loopback (::1)"}},
		{"loopback", poolOptions(FlagIPPool, "127.0.0.10-127.0.0.20/8"), []string{"reaches into loopback (127.0.0.0/8)"}},
		{"multicast", poolOptions(FlagIPPool, "239.1.1.0/24"), []string{"reaches into multicast (224.0.0.0/4)"}},
		{"link-local", poolOptions(FlagIPPool, "169.254.0.10-169.254.0.20/16"), []string{"reaches into link-local (169.254.0.0/16)"}},
		{"IPv6 link-local", poolOptions(FlagIPPool, "fe80::10-fe80::20/64"), []string{"reaches into link-local (fe80::/10)"}},
		{"IPv6 multicast", poolOptions(FlagIPPool, "ff02::1-ff02::5/64"), []string{"reaches into multicast (ff00::/8)"}},
		{"limited broadcast", poolOptions(FlagIPPool, "255.255.255.255/32"), []string{"reaches into the limited broadcast address (255.255.255.255)"}},
		{"too large", poolOptions(FlagIPPool, "10.0.0.0/8"), []string{
			"--harvester-ip-pool: 10.0.0.1-10.255.255.254 holds 16777214 addresses; a pool holds at most 65536 (each address a machine holds is an object in Harvester): give a smaller range, e.g. 10.0.0.1-10.1.0.0"}},
		{"IPv6 /64 subnet", poolOptions(FlagIPPool, "2001:db8:0:5::/64"), []string{"holds 18446744073709551615 addresses; a pool holds at most 65536"}},
		{"gateway, DNS and search domains without a pool", poolOptions(FlagIPPoolGateway, "10.0.0.1", FlagIPPoolDNS, "10.0.0.2", FlagIPPoolDNSSearch, "example.com"), []string{
			"--harvester-ip-pool-gateway: needs --harvester-ip-pool", "--harvester-ip-pool-dns: needs --harvester-ip-pool", "--harvester-ip-pool-dns-search: needs --harvester-ip-pool"}},
		{"search domains without DNS servers", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolDNSSearch, "example.com"), []string{
			"--harvester-ip-pool-dns-search: needs --harvester-ip-pool-dns: cloud-init drops search domains given without DNS servers"}},
		{"search domains not DNS names", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolDNS, "10.0.0.2", FlagIPPoolDNSSearch, "Example.com, corp.example.com., a b,"+strings.Repeat("a", 64)+".com,ok.example,ok.example"), []string{
			`--harvester-ip-pool-dns-search: domain 1: "Example.com" is not a DNS name of lowercase letters, digits, '-' and '.' (e.g. corp.example.com, labels of at most 63 characters, at most 253 in all, no trailing dot)`,
			`domain 2: "corp.example.com." is not a DNS name`, `domain 3: "a b" is not a DNS name`, `domain 4: (a value not shown: it may hold a secret) is not a DNS name`, /* a run of 64 letters could be a token */
			"--harvester-ip-pool-dns-search: domain 6: ok.example is given twice"}},
		{"33 search domains", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolDNS, "10.0.0.2", FlagIPPoolDNSSearch, searchList(33, 33*4-1)), []string{
			"--harvester-ip-pool-dns-search: has 33 domains; Kubernetes allows at most 32 search domains for a node's pods: give at most 32"}},
		{"search list over 2,048 characters", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolDNS, "10.0.0.2", FlagIPPoolDNSSearch, searchList(9, 2049)), []string{
			"--harvester-ip-pool-dns-search: is 2049 characters long with a space between domains; Kubernetes allows at most 2048 for a node's pods: give fewer or shorter domains"}},
		{"masquerade first NIC", poolOptions(FlagIPPool, "10.0.0.0/24", FlagNetworkInfo, `{"interfaces":[{"type":"masquerade"},{"networkName":"default/vlan1"}]}`), []string{
			"--harvester-ip-pool: applies to the first NIC, which is a masquerade interface on the pod network; make the first interface in --harvester-network-info a bridge on a VM network"}},
		// --harvester-network-data wins over the pool, so a document that could configure the first NIC is refused.
		{"network data v1", poolOptions(FlagIPPool, "10.0.0.0/24", FlagNetworkData, "version: 1\nconfig:\n  - {type: physical, name: eth0, subnets: [{type: dhcp}]}\n"), []string{
			"--harvester-network-data: is version 1; with --harvester-ip-pool write it as version 2"}},
		{"network data disabled", poolOptions(FlagIPPool, "10.0.0.0/24", FlagNetworkData, "network: {config: disabled}"), []string{
			"--harvester-network-data: disables networking (config: disabled), so the guest would not get --harvester-ip-pool's address"}},
		{"network data by name", poolOptions(FlagIPPool, "10.0.0.0/24", FlagNetworkData, "version: 2\nethernets:\n  eth0: {dhcp4: true}\n"), []string{
			"--harvester-network-data: ethernets.eth0 is not matched by macaddress: with --harvester-ip-pool, which configures the first NIC, match each ethernets entry by macaddress (set the NIC's macAddress in --harvester-network-info)"}},
		{"network data for the first NIC", poolOptions(FlagIPPool, "10.0.0.0/24",
			FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vlan1","macAddress":"52:54:00:aa:bb:cc"}]}`,
			FlagNetworkData, "version: 2\nethernets:\n  lan:\n    match: {macaddress: \"52:54:00:AA:BB:CC\"}\n    dhcp4: true\n"), []string{
			"--harvester-network-data: ethernets.lan already configures the NIC of that MAC address (the first NIC's): your network data wins over --harvester-ip-pool, so drop that entry or the pool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantRefused(t, tt.opts, tt.want...) })
	}
}

// searchList is n distinct search domains, comma-separated, whose list joined by spaces is total characters long.
func searchList(n, total int) string {
	domains := make([]string, n)
	for i := range domains {
		length := (total - (n - 1)) / n
		if i < (total-(n-1))%n {
			length++
		}
		d := fmt.Sprintf("d%02d", i)
		for need := length - len(d); need > 0; need = length - len(d) {
			label := min(63, need-1)
			if need-1-label == 1 { // one character could not be a label of its own
				label--
			}
			d += "." + strings.Repeat("a", label)
		}
		domains[i] = d
	}
	return strings.Join(domains, ",")
}

// Kubernetes' own bounds are reached, not refused: 32 domains, and 2,048 characters with the spaces between them.
func TestParseIPPoolSearchDomainsAtTheBounds(t *testing.T) {
	for _, list := range []string{searchList(32, 32*4-1), searchList(9, 2048)} {
		cfg, err := ParseConfig("m1", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolDNS, "10.0.0.2", FlagIPPoolDNSSearch, list))
		if err != nil {
			t.Fatalf("%d domains, %d characters: %v", strings.Count(list, ",")+1, len(list), err)
		}
		if got := strings.Join(cfg.IPPool.Search, ","); got != list {
			t.Errorf("search domains %q, want %q", got, list)
		}
	}
}

func TestParseIPPoolSearchDomains(t *testing.T) {
	cfg, err := ParseConfig("m1", poolOptions(FlagIPPool, "10.0.0.0/24", FlagIPPoolDNS, "10.0.0.2", FlagIPPoolDNSSearch, " example.com , corp.example.com,,"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.IPPool.Search, " "); got != "example.com corp.example.com" {
		t.Errorf("search domains %q", got)
	}
}

// Network data for the other NICs, matched by MAC, goes with a pool.
func TestParseIPPoolWithOtherNICsNetworkData(t *testing.T) {
	_, err := ParseConfig("m1", poolOptions(FlagIPPool, "10.0.0.0/24",
		FlagNetworkInfo, `{"interfaces":[{"networkName":"default/vlan1"},{"networkName":"default/storage","macAddress":"52:54:00:00:00:02"}]}`,
		FlagNetworkData, "version: 2\nethernets:\n  storage:\n    match: {macaddress: \"52:54:00:00:00:02\"}\n    dhcp4: true\n"))
	if err != nil {
		t.Fatal(err)
	}
}
