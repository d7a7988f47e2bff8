package testbed_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/fixtures"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// A step after the control plane is up (here seeding, with a namespace name the API server refuses) is reported
// as an error and the bed is stopped. (Start used to panic here: its deferred clean-up called Stop on the result
// variable that `return nil, err` had just set to nil.)
func TestStartReportsAFailedStep(t *testing.T) {
	testbed.RequireControlPlane(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the control plane's directory goes here, away from other packages' beds
	bed, err := testbed.Start(context.Background(), testbed.Options{
		Fixtures: &fixtures.Spec{Namespaces: []string{"Not_A_Namespace_Name"}},
		Logf:     t.Logf,
	})
	if bed != nil {
		bed.Stop()
		t.Fatal("Start returned a bed along with an error")
	}
	if err == nil || !strings.Contains(err.Error(), "seed the Harvester fixtures") ||
		!strings.Contains(err.Error(), "Not_A_Namespace_Name") {
		t.Fatalf("Start error = %v, want the seeding step and the refused name", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "dmdh-controlplane-*")); len(left) > 0 {
		t.Errorf("the failed start left the control plane's directory behind: %v", left)
	}
}
