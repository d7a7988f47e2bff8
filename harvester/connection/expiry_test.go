package connection

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// jwt returns a token shaped like a service-account JWT with the given claims (unsigned: only the claims are read).
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
}

func TestTokenExpiry(t *testing.T) {
	at := time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		name, token string
		want        time.Time
	}{
		{"service-account JWT", jwt(`{"iss":"kubernetes/serviceaccount","exp":1796113800}`), at},
		{"padded payload", strings.Replace(jwt(`{"exp":1796113800}`), ".", "==.", 1), at},
		{"JWT without exp (legacy service-account token)", jwt(`{"iss":"kubernetes/serviceaccount"}`), time.Time{}},
		{"Rancher token", "kubeconfig-user-abc12:n7x4kq2wz8v", time.Time{}},
		{"exp not a number", jwt(`{"exp":"tomorrow"}`), time.Time{}},
		{"payload not JSON", "a.bm90IGpzb24.c", time.Time{}},
		{"payload not base64", "a.!!!.c", time.Time{}},
		{"empty", "", time.Time{}},
	} {
		got, ok := tokenExpiry(c.token)
		if !got.Equal(c.want) || ok == c.want.IsZero() {
			t.Errorf("%s: tokenExpiry = %v, %v; want %v", c.name, got, ok, c.want)
		}
	}
}

func TestExpiryWarning(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		expiry Expiry
		want   []string // all in the warning; nil for none
	}{
		{"in 13 days", Expiry{At: now.Add(13*24*time.Hour + time.Hour)}, []string{"expires at 2026-12-06T13:00:00Z, in 13 days", "update the Harvester cloud credential", "Cloud Credentials"}},
		{"in 5 hours", Expiry{At: now.Add(5 * time.Hour)}, []string{"in 5 hours"}},
		{"in 15 days", Expiry{At: now.Add(15 * 24 * time.Hour)}, nil},
		{"in 30 days (a new Rancher token)", Expiry{At: now.Add(30 * 24 * time.Hour)}, nil},
		{"expired", Expiry{At: now.Add(-3 * 24 * time.Hour)}, []string{"token expired at 2026-11-20T12:00:00Z (3 days ago)", "until it is renewed", "update the Harvester cloud credential"}},
		{"refused by Rancher", Expiry{Refused: true}, []string{"Rancher refuses the Harvester credential's token (401 Unauthorized", "expired or been revoked", "update the Harvester cloud credential"}},
		{"no expiry", Expiry{}, nil},
	} {
		for verb, warn := range map[string]func(Expiry, time.Time) string{"create": ExpiryWarning, "rm": RemoveExpiryWarning} {
			got := warn(c.expiry, now)
			if (got == "") != (c.want == nil) {
				t.Errorf("%s, %s: warning %q", c.name, verb, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s, %s: warning %q lacks %q", c.name, verb, got, w)
				}
			}
			// The remove's says how to remove with a current credential, on both routes.
			if verb == "rm" && got != "" && (!strings.Contains(got, "the removal's next try uses") ||
				!strings.Contains(got, "rancher-machine rm --update-config --harvester-kubeconfig-content")) {
				t.Errorf("%s: the remove's warning does not say how to remove with a current credential: %q", c.name, got)
			}
		}
	}
}

// A rejected credential whose token has expired says when it expired.
func TestRejectedExpiredCredentialGivesTheExpiry(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	token := jwt(`{"exp":1795338000}`) // 2026-11-22T09:00:00Z
	kubeconfig := strings.Replace(configtest.Kubeconfig, "not-a-real-token", token, 1)
	c, read, err := Connect(Credential{Content: []byte(kubeconfig)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := read.Expiry(context.Background()); err != nil || !e.At.Equal(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)) || e.Refused {
		t.Errorf("expiry %+v, %v", e, err)
	}
	msg := c.Explain("read VM", "default/m1", apierrors.NewUnauthorized("Unauthorized")).Error()
	for _, want := range []string{"401 Unauthorized", "Its token expired at 2026-11-22T09:00:00Z (27 hours ago)", "update the Harvester cloud credential"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, token) {
		t.Errorf("the error quotes the token")
	}
}
