package connection

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// expiryWarningWindow is how long before its token expires a create says so (harvester/harvester#5827: Rancher's
// Harvester cloud credentials carry tokens that expire, and a machine whose credential has expired can no longer
// be stopped or removed by the driver).
const expiryWarningWindow = 30 * 24 * time.Hour

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

// ExpiryWarning is the Info message of a create whose credential expires within expiryWarningWindow, or "".
func ExpiryWarning(expiry, now time.Time) string {
	left := expiry.Sub(now)
	if expiry.IsZero() || left <= 0 || left >= expiryWarningWindow {
		return ""
	}
	return fmt.Sprintf("The Harvester credential expires at %s, in %s; after that this machine can no longer be stopped, started or removed with it. %s",
		expiry.Format(time.RFC3339), RoundDuration(left), RenewCredential)
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
