package harvester

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// A machine's saved credential is content too: one that names an exec plugin (saved by an older driver) is
// refused when the machine is loaded, and the command that needs it says so and how to give a current one; the
// plugin never runs and nothing reaches the server.
func TestSavedCredentialIsInlineOnly(t *testing.T) {
	srv := configtest.NewRecorder(t)
	marker := filepath.Join(t.TempDir(), "marker")
	d := NewDriver("", "")
	if err := json.Unmarshal(referenceState(t, configtest.ExecKubeconfig(srv.URL, marker)), d); err != nil {
		t.Fatalf("loading must not fail on a refused credential (rm must still be able to run with another): %v", err)
	}
	_, err := d.api()
	if err == nil || !strings.Contains(err.Error(), "the Harvester credential saved with this machine is refused") ||
		!strings.Contains(err.Error(), `its user "u" uses exec`) || !strings.Contains(err.Error(), "pass a current one with --harvester-kubeconfig-content") {
		t.Fatalf("want the saved credential refused, got %v", err)
	}
	srv.WantNothingRan(t, marker)
}

// The plugin's client follows no redirect: a machine's command (state, here) against an API server that
// redirects its calls sends nothing to the redirect's target, and its error names both hosts, not the
// credential.
func TestDriverFollowsNoRedirect(t *testing.T) {
	const token = "Q9-driver-redirect-token"
	r := configtest.NewRedirector(t)
	d := NewDriver("", "")
	if err := json.Unmarshal(referenceState(t, r.Kubeconfig(token)), d); err != nil {
		t.Fatal(err)
	}
	_, err := d.GetState()
	r.WantRefused(t, err, token)
}
