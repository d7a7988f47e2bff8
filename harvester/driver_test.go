package harvester

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestUnmarshalJSONReloadsCredential(t *testing.T) {
	// State saved by the reference driver: the credential is part of it.
	legacy := `{"MachineName":"gc8-pool1-a-b","StorePath":"/store","VMNamespace":"team-a","ClusterName":"gc8","KubeConfigContent":` +
		strconvQuote(testKubeconfig) + `,"SSHPassword":"x"}`

	t.Run("reference driver state", func(t *testing.T) {
		d := NewDriver("", "")
		if err := json.Unmarshal([]byte(legacy), d); err != nil {
			t.Fatal(err)
		}
		if d.MachineName != "gc8-pool1-a-b" || d.VMNamespace != "team-a" || d.ClusterName != "gc8" || d.StorePath != "/store" {
			t.Errorf("fields not loaded: %+v %+v", d, d.BaseDriver)
		}
		if string(d.kubeconfig) != testKubeconfig || d.credentialErr != nil {
			t.Errorf("the stored credential is not used (err %v)", d.credentialErr)
		}
	})

	t.Run("rotated credential in the environment wins", func(t *testing.T) {
		rotated := strings.Replace(testKubeconfig, "not-a-real-token", "rotated-token", 1)
		t.Setenv("HARVESTER_KUBECONFIG_CONTENT", base64.StdEncoding.EncodeToString([]byte(rotated)))
		d := NewDriver("", "")
		if err := json.Unmarshal([]byte(legacy), d); err != nil {
			t.Fatal(err)
		}
		if string(d.kubeconfig) != rotated {
			t.Errorf("the rotated credential from $HARVESTER_KUBECONFIG_CONTENT is not used")
		}
	})

	t.Run("unusable credential is reported, not silently replaced", func(t *testing.T) {
		t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "not a kubeconfig: [")
		d := NewDriver("", "")
		if err := json.Unmarshal([]byte(legacy), d); err != nil {
			t.Fatalf("loading must not fail on a bad credential (rm must still run): %v", err)
		}
		if d.credentialErr == nil || !strings.Contains(d.credentialErr.Error(), "$HARVESTER_KUBECONFIG_CONTENT") {
			t.Errorf("credentialErr = %v", d.credentialErr)
		}
	})
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
