package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/rancherproxy"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// Every route says when the credential's token expires within 14 days, for every kind of token: the check verb
// (its credential line), and a create and a remove through the real rancher-machine. A service-account JWT says it
// in its exp claim; a Rancher token, through Rancher's proxy URL, is asked about at Rancher's token API
// (rancherproxy: GET /v3/tokens/<name>, answered as Rancher answers); a Rancher token whose ttl Rancher set to 0
// (its built-in Harvester credentials') and a token that says nothing (the bed's admin token) get no warning.
func TestEveryRouteWarnsOfAnExpiringCredential(t *testing.T) {
	b, rancher := testbed.Shared(t), startRancher(t)
	ctx := context.Background()
	ns := b.Namespace(t)
	issued, err := b.Credential(ctx, credential.Spec{Namespace: ns, Name: "expiring", ClusterRoles: []string{"cluster-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := issued.Expiring(ctx, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	for _, c := range []struct {
		name       string
		kubeconfig []byte
		expires    time.Time // zero: no warning
		rancher    bool      // a Rancher token: rm asks the token API
	}{
		{"a service-account JWT expiring in 7 days", jwt.Kubeconfig, time.Now().Add(7 * day), false},
		{"a Rancher token expiring in 10 days", rancher.Kubeconfig(rancher.Token(20*day, 30*day, false)), time.Now().Add(10 * day), true},
		{"a Rancher token whose ttl Rancher set to 0", rancher.Kubeconfig(rancher.Token(40*day, 30*day, true)), time.Time{}, true},
		{"a Rancher token expiring in 20 days", rancher.Kubeconfig(rancher.Token(10*day, 30*day, false)), time.Time{}, true},
		{"a token that says nothing", b.AdminKubeconfig(), time.Time{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := b.Namespace(t)
			warns := func(route, out string) {
				t.Helper()
				if c.expires.IsZero() {
					if strings.Contains(out, "credential expires at") || strings.Contains(out, "token expired") {
						t.Errorf("%s warns of an expiry:\n%s", route, out)
					}
					return
				}
				if want := "The Harvester credential expires at " + c.expires.UTC().Format("2006-01-02T"); !strings.Contains(out, want) ||
					!strings.Contains(out, "update the Harvester cloud credential") {
					t.Errorf("%s does not warn %q…, with how to renew it:\n%s", route, want, out)
				}
			}
			cli := newCLI(t, c.kubeconfig) // builds the plugin
			out, code := runCheck(t, c.kubeconfig, checkArgs(ns)...)
			if code != 0 {
				t.Errorf("check: exit %d", code)
			}
			warns("check", out)
			warns("create", quiet(t, cli.must(append(createArgs(t, ns), "m1")...)).Output)
			if _, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			reads := rancher.TokenReads()
			r := cli.must("rm", "-y", "m1")
			warns("rm", r.Output)
			if asked := rancher.TokenReads() > reads; asked != c.rancher {
				t.Errorf("rm asked Rancher's token API: %v; want %v (a Rancher token only)", asked, c.rancher)
			}
			if !c.expires.IsZero() && !strings.Contains(r.Output, "rancher-machine rm --update-config --harvester-kubeconfig-content") {
				t.Errorf("rm's warning does not say how to remove with a current credential:\n%s", r.Output)
			}
			nothingLeft(t, b, ns)
		})
	}
}

// A Rancher token that has expired: rm says so, removes nothing, and says what to do; given a current credential
// (rm --update-config, as Rancher's next try passes the updated cloud credential), the same rm removes the machine.
func TestRemoveWithAnExpiredRancherTokenSaysWhatToDo(t *testing.T) {
	b, rancher := testbed.Shared(t), startRancher(t)
	ctx := context.Background()
	ns := b.Namespace(t)
	tok := rancher.Token(0, 30*24*time.Hour, false)
	cli := newCLI(t, rancher.Kubeconfig(tok))
	cli.must(append(createArgs(t, ns), "m1")...)
	rancher.Expire(tok)
	r := cli.run("rm", "-y", "--update-config", "m1")
	if r.Err == nil {
		t.Fatalf("rm with an expired credential succeeded:\n%s", r.Output)
	}
	for _, want := range []string{
		"Rancher refuses the Harvester credential's token (401 Unauthorized from its token API): it has expired or been revoked",
		"rancher-machine rm --update-config --harvester-kubeconfig-content",
		"rejected the credential (401 Unauthorized)",
	} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("rm does not say %q:\n%s", want, r.Output)
		}
	}
	if _, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, "m1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the VM went with a refused credential: %v", err)
	}
	cli.setCredential(rancher.Kubeconfig(rancher.Token(0, 30*24*time.Hour, false)))
	cli.must("rm", "-y", "--update-config", "m1")
	nothingLeft(t, b, ns)
}

// startRancher starts a stand-in Rancher in front of the shared bed for the test.
func startRancher(t *testing.T) *rancherproxy.Proxy {
	t.Helper()
	p, err := rancherproxy.Start(testbed.Shared(t).AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
