package connection

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// ExpiryWarningWindow is how long before its token expires `check`, a create and a remove say so
// (harvester/harvester#5827: a machine whose credential has expired can no longer be stopped or removed by the
// driver). Rancher's kubeconfig tokens live 30 days by default (its setting kubeconfig-default-token-ttl-minutes),
// so a longer window would warn from a credential's first day.
const ExpiryWarningWindow = 14 * 24 * time.Hour

// tokenExpiry reads the expiry (the `exp` claim) of a bearer token that is a JWT, as service-account tokens are.
// It only reads the claim — the API server checks the signature — and reports false for tokens that are not JWTs
// or carry no expiry (Rancher's own tokens, legacy service-account tokens).
func tokenExpiry(token string) (time.Time, bool) {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == nil || *claims.Exp <= 0 || *claims.Exp > math.MaxInt32*4 {
		return time.Time{}, false
	}
	return time.Unix(int64(*claims.Exp), 0).UTC(), true
}

// Expiry is what is known of when the credential's token expires.
type Expiry struct {
	// At is when it expires; zero when it does not, or when that cannot be told.
	At time.Time
	// Refused is set when Rancher, asked about its own token, refused it: it has expired or been revoked.
	Refused bool
}

// Token is the credential's bearer token as far as its expiry goes (see Connect): a service-account JWT says when
// it expires in its exp claim; a Rancher token (<name>:<key>, through Rancher's proxy) is asked about at Rancher
// (rancherToken); any other credential tells nothing. Safe for use by several goroutines; Rancher is asked once.
type Token struct {
	jwt     time.Time     // a JWT's exp
	rancher *rancherToken // where a Rancher token reads its own expiry; nil for other tokens
}

// Expiry returns when the token expires. Only a Rancher token makes a request, the first time.
func (t *Token) Expiry(ctx context.Context) (Expiry, error) {
	switch {
	case t == nil:
		return Expiry{}, nil
	case t.rancher != nil:
		return t.rancher.expiry(ctx)
	}
	return Expiry{At: t.jwt}, nil
}

// expiryNote says when a credential's token expires (or expired), for the error a rejected credential gets.
func expiryNote(expiry, now time.Time) string {
	if expiry.IsZero() {
		return ""
	}
	if !now.Before(expiry) {
		return fmt.Sprintf("Its token expired at %s (%s ago)", expiry.Format(time.RFC3339), RoundDuration(now.Sub(expiry)))
	}
	return fmt.Sprintf("Its token expires at %s", expiry.Format(time.RFC3339))
}

// ExpiryWarning is the warning of `check` and a create whose credential's token expires within
// ExpiryWarningWindow, has expired, or was refused by Rancher; "" otherwise.
func ExpiryWarning(e Expiry, now time.Time) string {
	return expiryWarning(e, now, "this machine can no longer be stopped, started or removed with it", RenewCredential)
}

// RemoveExpiryWarning is the remove's: the machine being removed is the last one it concerns, and an expired
// credential's remove fails until the credential is renewed.
func RemoveExpiryWarning(e Expiry, now time.Time) string {
	return expiryWarning(e, now, "no machine made with it can be stopped, started or removed", RenewForRemove)
}

func expiryWarning(e Expiry, now time.Time, after, renew string) string {
	left := e.At.Sub(now)
	switch {
	case e.Refused:
		return fmt.Sprintf("Rancher refuses the Harvester credential's token (401 Unauthorized from its token API): it has expired or been revoked, and Harvester refuses it too. %s", renew)
	case e.At.IsZero() || left >= ExpiryWarningWindow:
		return ""
	case left <= 0:
		return fmt.Sprintf("The Harvester credential's token expired at %s (%s ago): Harvester refuses it, and no machine made with it can be created, stopped, started or removed until it is renewed. %s",
			e.At.Format(time.RFC3339), RoundDuration(-left), renew)
	}
	return fmt.Sprintf("The Harvester credential expires at %s, in %s; after that %s. %s",
		e.At.Format(time.RFC3339), RoundDuration(left), after, renew)
}

// RoundDuration words a duration for people: days, or hours and minutes under a day.
func RoundDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
}
