package connection

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	testTokenName = "kubeconfig-u-abc12"
	testTokenKey  = "k7x2qv9wz4nm8rt5"
)

// fakeRancher answers GET <prefix>/v3/tokens/<name> as Rancher does for a user's own token (kube.RancherToken
// cites the code and the shape): answer, when the request carries the token <name>:<key>, and 401 Unauthorized
// for any other credential (rancher/rancher pkg/auth/requests: an unknown, expired or disabled token). status,
// when set, is answered instead. It counts the requests.
type fakeRancher struct {
	*httptest.Server
	answer   string
	status   int
	requests atomic.Int32
}

func newFakeRancher(t *testing.T, prefix, answer string) *fakeRancher {
	f := &fakeRancher{answer: answer}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		switch {
		case r.URL.Path != prefix+"/v3/tokens/"+testTokenName || r.Method != http.MethodGet:
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer "+testTokenName+":"+testTokenKey:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"error","status":"401","message":"must authenticate"}`))
		case f.status != 0:
			w.WriteHeader(f.status)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(f.answer))
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// kubeconfig is a credential for Rancher's proxy to a cluster at f, under path prefix, with the token key.
func (f *fakeRancher) kubeconfig(t *testing.T, prefix, key string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	cfg.Clusters["harvester"] = &clientcmdapi.Cluster{Server: f.URL + prefix + "/k8s/clusters/c-m-xyz34", CertificateAuthorityData: ca}
	cfg.AuthInfos["harvester"] = &clientcmdapi.AuthInfo{Token: testTokenName + ":" + key}
	cfg.Contexts["harvester"] = &clientcmdapi.Context{Cluster: "harvester", AuthInfo: "harvester"}
	cfg.CurrentContext = "harvester"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tokenAnswer is Rancher's answer about a kubeconfig token made at created with ttl (SetTokenExpiresAt's
// expiresAt), trimmed to the fields around the ones read.
func tokenAnswer(ttl time.Duration, expiresAt string) string {
	return `{"authProvider":"local","baseType":"token","created":"2026-11-23T12:00:00Z","current":false,"description":"Kubeconfig token",` +
		`"expired":false,"expiresAt":"` + expiresAt + `","id":"` + testTokenName + `","isDerived":true,"name":"` + testTokenName + `",` +
		`"ttl":` + strconv.FormatInt(ttl.Milliseconds(), 10) + `,"type":"token","userId":"u-abc12","userPrincipal":"local://u-abc12"}`
}

// A Rancher token reads its own expiry from Rancher, once, and it is what Rancher's answer means: a ttl of 0 never
// expires, whatever expiresAt still says; a refusal is an expired or revoked token; anything else tells nothing.
func TestRancherTokenReadsItsExpiry(t *testing.T) {
	month := 30 * 24 * time.Hour
	for _, c := range []struct {
		name, answer string
		status       int
		key          string
		want         Expiry
		err          string // in the error, "" for none
	}{
		{"a kubeconfig token", tokenAnswer(month, "2026-12-23T12:00:00Z"), 0, testTokenKey, Expiry{At: time.Date(2026, 12, 23, 12, 0, 0, 0, time.UTC)}, ""},
		// syncHarvesterToken sets the ttl to 0 and leaves expiresAt as it was.
		{"ttl 0 (a built-in Harvester credential's)", tokenAnswer(0, "2026-12-23T12:00:00Z"), 0, testTokenKey, Expiry{}, ""},
		{"refused", "", 0, "wrong-key", Expiry{Refused: true}, ""},
		{"no token API (404)", "", http.StatusNotFound, testTokenKey, Expiry{}, "404 Not Found"},
		{"not a token", `<html>`, 0, testTokenKey, Expiry{}, "not a token"},
		{"no expiresAt", tokenAnswer(month, ""), 0, testTokenKey, Expiry{}, "no expiresAt"},
		{"an answer past any token's size", `{"ttl":1,"x":"` + strings.Repeat("a", 70<<10) + `"}`, 0, testTokenKey, Expiry{}, "over 64 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeRancher(t, "", c.answer)
			f.status = c.status
			_, token, err := Connect(Credential{Content: f.kubeconfig(t, "", c.key)}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				got, err := token.Expiry(context.Background())
				if !got.At.Equal(c.want.At) || got.Refused != c.want.Refused {
					t.Errorf("expiry %+v, want %+v", got, c.want)
				}
				if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
					t.Errorf("error %v, want one saying %q", err, c.err)
				}
				if err != nil && (strings.Contains(err.Error(), c.key) || strings.Contains(err.Error(), strings.Repeat("a", 100))) {
					t.Errorf("the error quotes the token or the answer: %v", err)
				}
			}
			if n := f.requests.Load(); n != 1 {
				t.Errorf("Rancher was asked %d times, want once", n)
			}
		})
	}
}

// Rancher is asked where its proxy URL says it is, a path before /k8s/clusters/ included; a Rancher token sent
// elsewhere (a cluster's own endpoint), a JWT and a token of another form are never asked about.
func TestRancherTokenIsAskedWhereRancherIs(t *testing.T) {
	f := newFakeRancher(t, "/rancher", tokenAnswer(time.Hour, "2026-11-23T13:00:00Z"))
	_, token, err := Connect(Credential{Content: f.kubeconfig(t, "/rancher", testTokenKey)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := token.Expiry(context.Background()); err != nil || !got.At.Equal(time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("expiry %+v, %v", got, err)
	}
	for name, kubeconfig := range map[string]string{
		"a Rancher token to a cluster's own endpoint": strings.Replace(string(f.kubeconfig(t, "", testTokenKey)), "/k8s/clusters/c-m-xyz34", "", 1),
		"a JWT":                    strings.Replace(string(f.kubeconfig(t, "", testTokenKey)), testTokenName+":"+testTokenKey, jwt(`{"exp":1796113800}`), 1),
		"a token of another form":  strings.Replace(string(f.kubeconfig(t, "", testTokenKey)), testTokenName+":"+testTokenKey, "plain-token", 1),
		"a name that is no object": strings.Replace(string(f.kubeconfig(t, "", testTokenKey)), testTokenName+":", "../v3/x:", 1),
	} {
		_, token, err := Connect(Credential{Content: []byte(kubeconfig)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := token.Expiry(context.Background()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("Rancher was asked %d times, want once (for its own proxy's token)", n)
	}
}
