package networkconfig

import (
	"bytes"
	"testing"
)

// What each cloud-init renderer makes of a dual-stack entry's default routes, as docs/static-addresses.md states it: the IPv4
// one is a default route everywhere; the IPv6 one (`to: ::/0`) only on netplan, which gets the v2 document as
// written. cloud-init 22.4's ENI and sysconfig renderers write it as ::/64, because _normalize_route
// (cloudinit/net/network_state.py) runs twice on v2 routes and the second run drops the prefix 0
// (canonical/cloud-init#4600). Should the installed cloud-init render it right, this test fails: then the guide's
// known limit is to be dropped and the want below turned into a default route.
func TestStaticDefaultRoutesAsCloudInitRendersThem(t *testing.T) {
	doc, err := AddStatic(nil, staticDual())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"eni":       {"post-up route add default gw 10.0.0.1", "post-up route add -A inet6 ::/64 gw 2001:db8::1"},
		"sysconfig": {"GATEWAY=10.0.0.1", "::/64 via 2001:db8::1"},
		"netplan":   {"to: 0.0.0.0/0", "via: 10.0.0.1", "to: ::/0", "via: 2001:db8::1"},
	}
	for _, r := range renderers {
		out, rendered, err := netConvertRendered(t, doc, r[0], r[1])
		if err != nil {
			t.Fatalf("net-convert to %s: %v\n%s", r[0], err, out)
		}
		for _, w := range want[r[0]] {
			if !bytes.Contains(rendered, []byte(w)) {
				t.Errorf("what net-convert's %s renderer writes lacks %q:\n%s", r[0], w, rendered)
			}
		}
	}
}
