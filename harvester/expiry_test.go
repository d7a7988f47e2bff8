package harvester

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// fixedExpiry is a credential's token whose expiry is known (connection.Token reads it from the token, or from
// Rancher: harvester/connection's tests).
type fixedExpiry connection.Expiry

func (f fixedExpiry) Expiry(context.Context) (connection.Expiry, error) {
	return connection.Expiry(f), nil
}

// expiries are the token kinds a credential carries, as far as their expiry goes, and what the warning says.
var expiries = []struct {
	name   string
	expiry connection.Expiry
	want   string // in the warning; "" for none
}{
	{"a JWT or Rancher token expiring in 10 days", connection.Expiry{At: time.Now().Add(10*24*time.Hour + time.Hour)}, "in 10 days"},
	{"one expiring in 20 days", connection.Expiry{At: time.Now().Add(20 * 24 * time.Hour)}, ""},
	{"one that expired", connection.Expiry{At: time.Now().Add(-49 * time.Hour)}, "token expired at"},
	{"a Rancher token Rancher refuses", connection.Expiry{Refused: true}, "Rancher refuses the Harvester credential's token"},
	{"one without expiry", connection.Expiry{}, ""},
}

// Create warns, as a milestone the Rancher user sees, when the credential expires within 14 days or has expired.
func TestCreateWarnsOfAnExpiringCredential(t *testing.T) {
	for _, c := range expiries[:2] { // an expired token fails the create's first request (TestPreCreateCheckRejections)
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			fc.kubeVirt(healthy("10.0.0.5"))
			info := kubefake.CaptureLog(t)
			d := newTestDriver(t, fc, "m1", createOptions())
			d.token = fixedExpiry(c.expiry)
			if err := d.Create(); err != nil {
				t.Fatal(err)
			}
			checkWarning(t, info.String(), c.want, "this machine can no longer be stopped, started or removed with it")
		})
	}
}

// rm warns too, and says how to remove the machine with a current credential.
func TestRemoveWarnsOfAnExpiringCredential(t *testing.T) {
	for _, c := range expiries {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			info := kubefake.CaptureLog(t)
			fc.vmWithVolumes("m1", map[string]bool{"m1-disk-0-abcde": false}, nil)
			d := rmDriver(fc, "m1", "")
			d.token = fixedExpiry(c.expiry)
			if err := d.Remove(); err != nil {
				t.Fatal(err)
			}
			checkWarning(t, info.String(), c.want, "rancher-machine rm --update-config --harvester-kubeconfig-content")
		})
	}
}

// check's credential line says it, and when the token expires otherwise.
func TestCheckSaysWhenTheCredentialExpires(t *testing.T) {
	for _, c := range append(expiries[:2], expiries[3:]...) {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			d := newTestDriver(t, fc, "m1", createOptions())
			d.token = fixedExpiry(c.expiry)
			var detail string
			for _, check := range d.preflight(context.Background(), nil).Checks {
				if check.Name == preflight.CheckCredential {
					detail = check.Detail
				}
			}
			want := c.want
			switch {
			case want == "" && c.expiry.At.IsZero():
				want = "accepted by Harvester"
			case want == "":
				want = "accepted by Harvester; its token expires at " + c.expiry.At.Format(time.RFC3339) + ", in 19 days"
			}
			if !strings.Contains(detail, want) {
				t.Errorf("the credential check says %q, want %q", detail, want)
			}
		})
	}
}

// checkWarning checks that the log holds the expiry warning, with want and also, when there is one.
func checkWarning(t *testing.T, log, want, also string) {
	t.Helper()
	warned := strings.Contains(log, "The Harvester credential") || strings.Contains(log, "Harvester credential's token")
	if want == "" {
		if warned {
			t.Errorf("an expiry warning where none is due:\n%s", log)
		}
		return
	}
	if !strings.Contains(log, want) || !strings.Contains(log, also) {
		t.Errorf("no expiry warning saying %q and %q:\n%s", want, also, log)
	}
}
