package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"k8s.io/client-go/rest"
)

// RancherToken is what Rancher's token API says of a token, read with the token itself: GET /v3/tokens/<name>
// answers a user's own token (rancher/rancher pkg/auth/tokens/manager.go getTokenFromRequest, routed by
// pkg/auth/server.go for /v3/token…; the same in v2.12.12, v2.13.8, v2.14.4 and v2.15.0) with the token object
// (pkg/apis/management.cattle.io/v3 authn_types.go Token) through its Norman schema (ConvertTokenResource), e.g.
//
//	{"id":"kubeconfig-u-abc12","type":"token","ttl":2592000000,"expiresAt":"2026-12-31T10:00:00Z","expired":false,…}
//
// ttl is in milliseconds, 0 for a token that never expires (Token.GetIsExpired); expiresAt is set from the
// creation time and ttl when the token is made (pkg/auth/tokens/token_util.go SetTokenExpiresAt) and is not
// cleared when the ttl is set to 0 afterwards, as Rancher's own Harvester credentials are
// (pkg/controllers/management/cloudcredential/controller.go syncHarvesterToken).
type RancherToken struct {
	TTLMillis int64  `json:"ttl"`
	ExpiresAt string `json:"expiresAt"`
	Expired   bool   `json:"expired"`
}

// RancherRefusedError is Rancher refusing the token it was asked about (401): expired, disabled or revoked
// (rancher/rancher pkg/auth/requests authentication, tokens.VerifyToken).
type RancherRefusedError struct{ Status int }

func (e *RancherRefusedError) Error() string {
	return fmt.Sprintf("Rancher refused the token (%d %s): it has expired or been revoked", e.Status, http.StatusText(e.Status))
}

// rancherTokenTimeout bounds the read: it only adds a warning, so it must never hold up a create or a remove.
const rancherTokenTimeout = 10 * time.Second

// rancherTokenBudget bounds the answer: a token object is well under 4 KiB (its principals included).
const rancherTokenBudget = 64 << 10

// ReadRancherToken asks Rancher at base (the kubeconfig server's scheme, host and path before /k8s/clusters/)
// about its token name, with cfg's credential and TLS settings, and returns what it says. A refusal is a
// *RancherRefusedError; any other failure says what was asked and what came back, without the token.
func ReadRancherToken(ctx context.Context, cfg *rest.Config, base, name string) (RancherToken, error) {
	client, err := HTTPClient(cfg)
	if err != nil {
		return RancherToken{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, rancherTokenTimeout)
	defer cancel()
	endpoint := base + "/v3/tokens/" + url.PathEscape(name)
	a, err := getBounded(ctx, client, endpoint, rancherTokenBudget)
	if err != nil {
		return RancherToken{}, err
	}
	switch {
	case a.status == http.StatusUnauthorized:
		return RancherToken{}, &RancherRefusedError{Status: a.status}
	case a.status != http.StatusOK:
		return RancherToken{}, fmt.Errorf("GET %s: %s", endpoint, a.statusText)
	case a.readErr != nil:
		return RancherToken{}, fmt.Errorf("GET %s: %w", endpoint, a.readErr)
	case a.over:
		return RancherToken{}, fmt.Errorf("GET %s: the answer is over %d KiB, more than a token", endpoint, rancherTokenBudget>>10)
	}
	var t RancherToken
	if err := json.Unmarshal(a.body, &t); err != nil {
		return RancherToken{}, fmt.Errorf("GET %s: not a token: %v", endpoint, err)
	}
	return t, nil
}
