package connection

import (
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
		expiry time.Time
		want   []string // all in the warning; nil for none
	}{
		{"in 29 days", now.Add(29*24*time.Hour + time.Hour), []string{"expires at 2026-12-22T13:00:00Z, in 29 days", "update the Harvester cloud credential", "Cloud Credentials"}},
		{"in 5 hours", now.Add(5 * time.Hour), []string{"in 5 hours"}},
		{"in 31 days", now.Add(31 * 24 * time.Hour), nil},
		{"expired", now.Add(-time.Hour), nil}, // the API server's 401 says it, with the time (expiryNote)
		{"no expiry", time.Time{}, nil},
	} {
		got := ExpiryWarning(c.expiry, now)
		if (got == "") != (c.want == nil) {
			t.Errorf("%s: warning %q", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warning %q lacks %q", c.name, got, w)
			}
		}
	}
}

// A rejected credential whose token has expired says when it expired.
func TestRejectedExpiredCredentialGivesTheExpiry(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	token := jwt(`{"exp":1795338000}`) // 2026-11-22T09:00:00Z
	kubeconfig := strings.Replace(configtest.Kubeconfig, "not-a-real-token", token, 1)
	c, expiry, err := Connect(Credential{Content: []byte(kubeconfig)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !expiry.Equal(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("expiry %v", expiry)
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
