package connection

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// rancherProxyPath is the path of Rancher's proxy to a cluster it manages: a kubeconfig Rancher generates for a
// cluster has the server https://<rancher>/k8s/clusters/<cluster id> (rancher/rancher pkg/kubeconfig
// ForTokenBased), with a token of Rancher's own, <name>:<key> (pkg/auth/tokens token_util.go SplitTokenParts), as
// the kubeconfig of an imported Harvester's cloud credential is (pkg/api/norman/customization/cluster
// actions_kubeconfig.go, generateKubeconfig).
const rancherProxyPath = "/k8s/clusters/"

// rancherTokenName is a Rancher token's name: a Kubernetes object name (tokens.management.cattle.io), e.g.
// kubeconfig-u-abc12 or kubeconfig-user-abc12.c-m-xyz34 for a cluster-scoped one.
var rancherTokenName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// rancherToken is a Rancher token and where Rancher answers about it.
type rancherToken struct {
	cfg  *rest.Config // the credential's: its token and TLS settings
	base string       // Rancher's address: the proxy URL's scheme, host and path before /k8s/clusters/
	name string       // the token's name, the part of the token before ':'

	once   sync.Once
	answer Expiry
	err    error
}

// newRancherToken returns the Rancher token of cfg, or nil when cfg's credential is not one: a bearer token
// <name>:<key> sent to Rancher's proxy URL.
func newRancherToken(cfg *rest.Config) *rancherToken {
	name, key, ok := strings.Cut(cfg.BearerToken, ":")
	if !ok || key == "" || strings.Contains(key, ":") || !rancherTokenName.MatchString(name) {
		return nil
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil
	}
	i := strings.Index(u.Path, rancherProxyPath)
	if i < 0 {
		return nil // a Rancher token sent elsewhere (a cluster's authorized endpoint): no Rancher to ask
	}
	base := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path[:i]}
	return &rancherToken{cfg: cfg, base: base.String(), name: name}
}

// expiry asks Rancher once about the token (kube.ReadRancherToken) and keeps the answer: a ttl of 0 never
// expires, whatever expiresAt still says (see kube.RancherToken); otherwise expiresAt. A refusal is Refused.
func (t *rancherToken) expiry(ctx context.Context) (Expiry, error) {
	t.once.Do(func() {
		var read kube.RancherToken
		read, t.err = kube.ReadRancherToken(ctx, t.cfg, t.base, t.name)
		var refused *kube.RancherRefusedError
		switch {
		case errors.As(t.err, &refused):
			t.answer, t.err = Expiry{Refused: true}, nil
		case t.err != nil:
		case read.TTLMillis == 0:
		default:
			at, err := time.Parse(time.RFC3339, read.ExpiresAt)
			switch {
			case err == nil:
				t.answer.At = at.UTC()
			case read.Expired:
				t.answer.Refused = true
			default:
				t.err = fmt.Errorf("Rancher's answer about the token has a ttl but no expiresAt that is an RFC 3339 time")
			}
		}
	})
	return t.answer, t.err
}
