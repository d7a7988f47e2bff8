// Package rancherproxy stands in for Rancher's server as a node driver meets it through a cloud credential of an
// imported Harvester: the cluster proxy https://<rancher>/k8s/clusters/<id>/…, which forwards to the cluster's
// API server once it has authenticated a token of Rancher's own (rancher/rancher pkg/auth/requests; the proxy then
// acts for the token's user), and the token API GET /v3/tokens/<name>, which answers a user's own token
// (pkg/auth/tokens/manager.go getTokenFromRequest, the shape harvester/internal/kube RancherToken cites). Tokens
// are <name>:<key> (token_util.go SplitTokenParts) with a ttl from their creation, expiresAt set as SetTokenExpiresAt
// sets it and not cleared when the ttl is set to 0 later (cloudcredential/controller.go syncHarvesterToken); an
// expired one is refused on both paths with 401 (tokens.VerifyToken, "must authenticate, expired").
//
// It forwards to the bed's API server with the bed's admin credential. It serves HTTPS on 127.0.0.1, with a
// certificate of its own that its kubeconfigs trust: client-go sends a kubeconfig's token to an https server only
// (k8s.io/client-go tools/clientcmd client_config.go, ClientConfig).
package rancherproxy

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ClusterID is the id of the Harvester cluster behind the proxy, as Rancher names an imported cluster.
const ClusterID = "c-m-h4rv3st3"

// Proxy is the stand-in Rancher.
type Proxy struct {
	// URL is its address, https://127.0.0.1:<port>.
	URL     string
	forward *httputil.ReverseProxy
	server  *httptest.Server

	mu     sync.Mutex
	tokens map[string]*token // by name
	reads  int               // requests to the token API
}

type token struct {
	key     string
	created time.Time
	ttl     time.Duration // 0: never expires
	// expiresAt is what the token object says, set at creation from ttl (kept when the ttl is set to 0 later).
	expiresAt string
}

// Start starts the stand-in in front of the API server admin points at.
func Start(admin *rest.Config) (*Proxy, error) {
	target, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(admin)
	if err != nil {
		return nil, err
	}
	prefix := "/k8s/clusters/" + ClusterID
	p := &Proxy{tokens: map[string]*token{}, forward: &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = strings.TrimPrefix(r.In.URL.Path, prefix)
			r.Out.URL.RawPath = ""
			r.Out.Host = target.Host
			r.Out.Header.Del("Authorization") // the admin's credential, from the transport, acts for the user
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v3/tokens/{name}", p.tokenAPI)
	mux.HandleFunc(prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := p.authenticate(r); !ok {
			unauthorized(w)
			return
		}
		p.forward.ServeHTTP(w, r)
	})
	p.server = httptest.NewUnstartedServer(mux)
	p.server.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.server.StartTLS()
	p.URL = p.server.URL
	return p, nil
}

// TokenReads is how many requests the token API has had.
func (p *Proxy) TokenReads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reads
}

// Close stops the stand-in.
func (p *Proxy) Close() { p.server.Close() }

// Token makes a token that was created age ago with ttl (0: never expires) and returns it, <name>:<key>. With
// ttlCleared, the token was made with ttl and then set to never expire, as Rancher does to its Harvester
// credentials' tokens: expiresAt still says the first ttl's end.
func (p *Proxy) Token(age, ttl time.Duration, ttlCleared bool) string {
	name, key := "kubeconfig-u-"+random(5), random(16)
	created := time.Now().Add(-age).UTC().Truncate(time.Second)
	t := &token{key: key, created: created, ttl: ttl}
	if ttl != 0 {
		t.expiresAt = created.Add(ttl).Format(time.RFC3339)
	}
	if ttlCleared {
		t.ttl = 0
	}
	p.mu.Lock()
	p.tokens[name] = t
	p.mu.Unlock()
	return name + ":" + key
}

// Expire makes tok (<name>:<key>) reach the end of its ttl now.
func (p *Proxy) Expire(tok string) {
	name, _, _ := strings.Cut(tok, ":")
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tokens[name]; t != nil && t.ttl != 0 {
		t.created = time.Now().Add(-t.ttl)
	}
}

// Kubeconfig is the kubeconfig Rancher generates for the Harvester cluster with a token (pkg/kubeconfig
// ForTokenBased): the proxy URL of the cluster, the token.
func (p *Proxy) Kubeconfig(tok string) []byte {
	cfg := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.server.Certificate().Raw})
	cfg.Clusters["harvester"] = &clientcmdapi.Cluster{Server: p.URL + "/k8s/clusters/" + ClusterID, CertificateAuthorityData: ca}
	cfg.AuthInfos["harvester"] = &clientcmdapi.AuthInfo{Token: tok}
	cfg.Contexts["harvester"] = &clientcmdapi.Context{Cluster: "harvester", AuthInfo: "harvester"}
	cfg.CurrentContext = "harvester"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		panic(err) // only fails on a serializer bug
	}
	return out
}

// authenticate returns the token the request carries when it is one of the proxy's and has not expired.
func (p *Proxy) authenticate(r *http.Request) (string, bool) {
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	name, key, _ := strings.Cut(bearer, ":")
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tokens[name]
	if !ok || t == nil || t.key != key || (t.ttl != 0 && time.Since(t.created) >= t.ttl) {
		return "", false
	}
	return name, true
}

// tokenAPI answers GET /v3/tokens/<name> for the token the request carries, as Rancher does for a user's own.
func (p *Proxy) tokenAPI(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.reads++
	p.mu.Unlock()
	own, ok := p.authenticate(r)
	if !ok {
		unauthorized(w)
		return
	}
	name := r.PathValue("name")
	p.mu.Lock()
	t := p.tokens[name]
	p.mu.Unlock()
	if name != own || t == nil { // another user's token: getTokenByID answers 404
		http.Error(w, `{"type":"error","status":"404","message":"not found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": name, "name": name, "type": "token", "baseType": "token", "authProvider": "local", "userId": "u-abc12",
		"description": "Kubeconfig token", "isDerived": true, "current": false, "created": t.created.Format(time.RFC3339),
		"ttl": t.ttl.Milliseconds(), "expiresAt": t.expiresAt, "expired": false,
	})
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte(`{"type":"error","status":"401","message":"must authenticate"}`))
}

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
