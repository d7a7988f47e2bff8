package networkconfig

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/golden"
)

func staticV4() Static {
	return Static{ID: "nic-0", MAC: "0A:3C:0A:00:00:0A",
		Addresses:   []netip.Prefix{netip.MustParsePrefix("10.0.0.10/24")},
		Gateways:    []netip.Addr{netip.MustParseAddr("10.0.0.1")},
		Nameservers: []netip.Addr{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("1.1.1.1")}}
}

func staticV6() Static {
	return Static{ID: "nic-0", MAC: "4e:91:7a:33:10:c2",
		Addresses: []netip.Prefix{netip.MustParsePrefix("2001:db8::10/64")},
		Gateways:  []netip.Addr{netip.MustParseAddr("2001:db8::1")}}
}

// staticDual is a dual-stack NIC: an IPv4 and an IPv6 address, a default route per family, DNS servers of both.
func staticDual() Static {
	return Static{ID: "nic-0", MAC: "ee:79:0a:0a:00:0a",
		Addresses:   []netip.Prefix{netip.MustParsePrefix("10.0.0.10/24"), netip.MustParsePrefix("2001:db8::10/64")},
		Gateways:    []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("2001:db8::1")},
		Nameservers: []netip.Addr{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("2001:db8::53")}}
}

func withDNS(s Static, servers ...string) Static {
	for _, a := range servers {
		s.Nameservers = append(s.Nameservers, netip.MustParseAddr(a))
	}
	return s
}

func withSearch(s Static, domains ...string) Static {
	s.Search = domains
	return s
}

// staticCases pin what the driver gives a guest for an allocated address: alone, and merged into the user's
// version 2 network-config.
var staticCases = []struct {
	name string
	user string
	s    Static
}{
	{name: "v4-alone", s: staticV4()},
	{name: "v6-alone-no-dns", s: staticV6()},
	// The user's other NICs (matched by MAC) and their bonds and VLANs stay as written, comments included; the
	// driver's entry takes another name when the user's document uses nic-0.
	{name: "merged-with-user-v2", s: staticV4(), user: `network:
  version: 2
  # the second NIC carries storage traffic
  ethernets:
    nic-0:
      match: {macaddress: "52:54:00:00:00:02"}
      mtu: 9000
      dhcp4: true
  vlans:
    storage.20:
      id: 20
      link: nic-0
      addresses: [10.20.0.5/24]
`},
	// DNS search domains go under nameservers.search, with or without servers.
	{name: "v4-search-domains", s: withSearch(staticV4(), "example.com", "corp.example.com")},
	{name: "v6-search-domains", s: withSearch(withDNS(staticV6(), "2001:db8::53"), "example.org")},
	// A dual-stack pool's NIC: both addresses and both default routes in one entry.
	{name: "dual-stack", s: withSearch(staticDual(), "example.com")},
	// JSON is YAML: it stays in flow style; ethernets is made when the document has none.
	{name: "merged-with-json-without-ethernets", s: staticV6(), user: `{"version": 2, "renderer": "networkd"}`},
	// A lease of Harvester's managed DHCP (--harvester-ip-pool-name): the NIC asks for it by DHCP, found by its
	// MAC address, alone and beside the user's NICs.
	{name: "dhcp4-alone", s: dhcpLease()},
	{name: "dhcp4-merged-with-user-v2", s: dhcpLease(), user: "version: 2\nethernets:\n  storage:\n    match: {macaddress: '52:54:00:00:00:02'}\n    addresses: [10.20.0.5/24]\n"},
}

// dhcpLease is the first NIC's entry for a lease of Harvester's managed DHCP.
func dhcpLease() Static {
	return Static{ID: "nic-0", MAC: "02:5e:1a:77:c0:01", DHCP4: true}
}

// want is what the guest must get of s, in the document and in what each renderer writes.
func (s Static) want() []string {
	var want []string
	for _, a := range s.Addresses {
		want = append(want, a.Addr().String())
	}
	for _, a := range append(s.Gateways, s.Nameservers...) {
		want = append(want, a.String())
	}
	if s.DHCP4 {
		want = append(want, "dhcp")
	}
	return append(want, s.Search...)
}

func TestStaticGolden(t *testing.T) {
	for _, tc := range staticCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AddStatic([]byte(tc.user), tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(got); err != nil {
				t.Errorf("the result does not pass Validate: %v\n%s", err, got)
			}
			for _, w := range append(tc.s.want(), normalMAC(tc.s.MAC)) {
				if !strings.Contains(string(got), w) {
					t.Errorf("the result lacks %s:\n%s", w, got)
				}
			}
			if err := CheckStatic(got, tc.s.MAC); err == nil {
				t.Errorf("a second entry for the same MAC is accepted")
			}
			golden.Assert(t, "static/"+tc.name+".yaml", got)
		})
	}
}

// Every static document renders through every cloud-init renderer without a warning, and the addresses, the
// gateways, the DNS servers and the search domains come out in what each renderer writes.
func TestStaticAsCloudInitReadsIt(t *testing.T) {
	for _, tc := range staticCases {
		doc, err := AddStatic([]byte(tc.user), tc.s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range renderers {
			out, rendered, err := netConvertRendered(t, doc, r[0], r[1])
			if err != nil || bytes.Contains(out, []byte("WARNING")) || bytes.Contains(out, []byte("Skipping")) {
				t.Errorf("%s: net-convert to %s: %v\n%s", tc.name, r[0], err, out)
				continue
			}
			for _, w := range tc.s.want() {
				if !bytes.Contains(rendered, []byte(w)) {
					t.Errorf("%s: what net-convert's %s renderer writes lacks %s:\n%s", tc.name, r[0], w, rendered)
				}
			}
		}
	}
}

func TestAddStaticRefuses(t *testing.T) {
	s := staticV4()
	tests := []struct {
		name, doc string
		want      StaticConflict
		entries   []string
		msg       string
	}{
		{name: "version 1", doc: "version: 1\nconfig:\n  - {type: physical, name: eth0, subnets: [{type: dhcp}]}\n", want: ConflictVersion1,
			msg: "is a version 1 network-config; a static address can only be added to version 2"},
		{name: "disabled", doc: "network: {config: disabled}\n", want: ConflictDisabled, msg: "disables networking (config: disabled)"},
		{name: "matched by name", doc: "version: 2\nethernets:\n  eth0: {dhcp4: true}\n  eth1:\n    match: {name: en*}\n", want: ConflictUnmatched,
			entries: []string{"ethernets.eth0", "ethernets.eth1"}, msg: "ethernets.eth0, ethernets.eth1 are not matched by macaddress"},
		{name: "same MAC, other spelling", doc: "network:\n  version: 2\n  ethernets:\n    lan:\n      match: {macaddress: 0a-3c-0a-00-00-0a}\n      dhcp4: true\n",
			want: ConflictSameMAC, entries: []string{"network.ethernets.lan"}, msg: "network.ethernets.lan already configures the NIC of that MAC address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate([]byte(tt.doc)); err != nil {
				t.Fatalf("the case is not a valid network-config: %v", err)
			}
			_, err := AddStatic([]byte(tt.doc), s)
			var se *StaticError
			if !errors.As(err, &se) || se.Conflict != tt.want || strings.Join(se.Entries, " ") != strings.Join(tt.entries, " ") || err.Error() != tt.msg {
				t.Fatalf("got %#v (%v), want conflict %d on %v saying %q", err, err, tt.want, tt.entries, tt.msg)
			}
			if err := CheckStatic([]byte(tt.doc), s.MAC); err == nil || err.Error() != tt.msg {
				t.Errorf("CheckStatic: %v", err)
			}
		})
	}
	// Search domains without servers: cloud-init 22.4 would skip the whole entry (TestStaticAsCloudInitReadsIt
	// shows it does, had AddStatic let it through).
	if _, err := AddStatic(nil, withSearch(staticV6(), "example.org")); err == nil || !strings.Contains(err.Error(), "DNS search domains need DNS servers") {
		t.Errorf("search domains without servers: %v", err)
	}
	// Before the MAC is known only the MAC comparison is skipped.
	if err := CheckStatic([]byte("version: 2\nethernets:\n  lan: {match: {macaddress: \"0a:3c:0a:00:00:0a\"}}\n"), ""); err != nil {
		t.Errorf("with the MAC unknown: %v", err)
	}
	if err := CheckStatic(nil, s.MAC); err != nil {
		t.Errorf("no document: %v", err)
	}
}
