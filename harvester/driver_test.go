package harvester

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func TestUnmarshalJSONReloadsCredential(t *testing.T) {
	// State saved by the reference driver: the credential is part of it.
	legacy := `{"MachineName":"gc8-pool1-a-b","StorePath":"/store","VMNamespace":"team-a","ClusterName":"gc8","KubeConfigContent":` +
		strconvQuote(configtest.Kubeconfig) + `,"SSHPassword":"x"}`

	t.Run("reference driver state", func(t *testing.T) {
		d := NewDriver("", "")
		if err := json.Unmarshal([]byte(legacy), d); err != nil {
			t.Fatal(err)
		}
		if d.MachineName != "gc8-pool1-a-b" || d.VMNamespace != "team-a" || d.ClusterName != "gc8" || d.StorePath != "/store" {
			t.Errorf("fields not loaded: %+v %+v", d, d.BaseDriver)
		}
		if string(d.kubeconfig) != configtest.Kubeconfig || d.credentialErr != nil {
			t.Errorf("the stored credential is not used (err %v)", d.credentialErr)
		}
	})

	t.Run("rotated credential in the environment wins", func(t *testing.T) {
		rotated := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "rotated-token", 1)
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

// referenceState is the driver part of a machine's saved state as the reference driver writes it
// (testdata/state/reference-driver.json: every field of its Driver struct), with kubeconfig as its credential.
func referenceState(t *testing.T, kubeconfig string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "state", "reference-driver.json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer("@MACHINE@", "gc8-pool1-a-b", "@STORE@", "/store", "@NAMESPACE@", "team-a",
		"@CLUSTER@", "gc8", "@KUBECONFIG@", strconvQuote(kubeconfig)).Replace(string(raw)))
}

// savedCredential loads state into a fresh driver, saves it again as rancher-machine does after every command, and
// returns the credential the saved state carries ("" for none) and the driver.
func savedCredential(t *testing.T, state []byte) (string, *Driver) {
	t.Helper()
	d := NewDriver("", "")
	if err := json.Unmarshal(state, d); err != nil {
		t.Fatal(err)
	}
	saved, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		KubeConfigContent *string
		MachineName       string
		VMNamespace       string
		ClusterName       string
	}
	if err := json.Unmarshal(saved, &got); err != nil {
		t.Fatal(err)
	}
	if got.MachineName != "gc8-pool1-a-b" || got.VMNamespace != "team-a" || got.ClusterName != "gc8" {
		t.Errorf("saved state lost the machine's identity: %s", saved)
	}
	if got.KubeConfigContent == nil {
		return "", d
	}
	if *got.KubeConfigContent == "" {
		t.Errorf("an empty KubeConfigContent was saved: %s", saved)
	}
	return *got.KubeConfigContent, d
}

// keptThroughCommands loads and saves state three times, as status, ip and stop do, and fails unless each of them
// uses want as the credential and saves it again.
func keptThroughCommands(t *testing.T, state []byte, want string) {
	t.Helper()
	for i := range 3 {
		saved, d := savedCredential(t, state)
		if saved != want {
			t.Fatalf("command %d saved credential %q, want %q", i+1, saved, want)
		}
		if string(d.kubeconfig) != want || d.credentialErr != nil {
			t.Fatalf("command %d does not use the saved credential (err %v)", i+1, d.credentialErr)
		}
		state, _ = json.Marshal(d)
	}
}

// A machine the reference driver created keeps its saved credential through every command until a credential is
// given again: without it, stop, start and rm after the first command would have none.
func TestReferenceDriverStateKeepsItsCredential(t *testing.T) {
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "") // only the saved state
	os.Unsetenv("HARVESTER_KUBECONFIG_CONTENT")

	t.Run("kept through commands", func(t *testing.T) {
		keptThroughCommands(t, referenceState(t, configtest.Kubeconfig), configtest.Kubeconfig)
	})

	t.Run("a credential given again replaces it", func(t *testing.T) {
		rotated := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "rotated-token", 1)
		t.Setenv("HARVESTER_KUBECONFIG_CONTENT", base64.StdEncoding.EncodeToString([]byte(rotated)))
		saved, d := savedCredential(t, referenceState(t, configtest.Kubeconfig))
		if saved != "" {
			t.Errorf("the old credential is still saved after a new one was given")
		}
		if string(d.kubeconfig) != rotated {
			t.Errorf("the given credential is not used")
		}
	})

	t.Run("an unusable credential given does not drop the saved one", func(t *testing.T) {
		t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "not a kubeconfig: [")
		saved, d := savedCredential(t, referenceState(t, configtest.Kubeconfig))
		if saved != configtest.Kubeconfig {
			t.Errorf("saved credential %q, want the reference driver's kept", saved)
		}
		if d.credentialErr == nil {
			t.Errorf("the unusable credential given is not reported")
		}
	})

	t.Run("an unusable saved credential is reported as such", func(t *testing.T) {
		_, d := savedCredential(t, referenceState(t, "apiVersion: v1\nkind: Config\n"))
		if d.credentialErr == nil || !strings.Contains(d.credentialErr.Error(), "saved with this machine") ||
			!strings.Contains(d.credentialErr.Error(), "--harvester-kubeconfig-content") {
			t.Errorf("credentialErr = %v", d.credentialErr)
		}
	})
}

// The Rancher flow: the credential comes from $HARVESTER_KUBECONFIG_CONTENT (rancher-machine fills the flag's
// value from it), and nothing secret is saved, neither the credential nor the password.
func TestNewMachineStateHasNoCredentialFromTheEnvironment(t *testing.T) {
	for name, value := range map[string]string{"base64": base64.StdEncoding.EncodeToString([]byte(configtest.Kubeconfig)), "YAML": configtest.Kubeconfig} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("HARVESTER_KUBECONFIG_CONTENT", value)
			d := NewDriver("gc8-pool1-a-b", "/store")
			if err := d.SetConfigFromFlags(configtest.With(configtest.MinimalOptions(), config.FlagKubeconfigContent, value, config.FlagSSHPassword, "pw-secret")); err != nil {
				t.Fatal(err)
			}
			saved, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"KubeConfigContent", "not-a-real-token", "pw-secret"} {
				if strings.Contains(string(saved), secret) {
					t.Errorf("saved state contains %q: %s", secret, saved)
				}
			}
		})
	}
}

// The docker-machine flow: the credential given as the create flag (nothing, or another credential, in the
// environment) is saved with the machine, decoded, and every later command loads and uses it with nothing else set.
func TestCredentialFlagIsSavedWithTheMachine(t *testing.T) {
	other := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "environment-token", 1)
	for name, env := range map[string]string{"no environment": "", "another credential in the environment": other} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("HARVESTER_KUBECONFIG_CONTENT", env)
			d := NewDriver("gc8-pool1-a-b", "/store")
			given := base64.StdEncoding.EncodeToString([]byte(configtest.Kubeconfig))
			if err := d.SetConfigFromFlags(configtest.With(configtest.MinimalOptions(), config.FlagVMNamespace, "team-a",
				config.FlagClusterName, "gc8", config.FlagKubeconfigContent, given, config.FlagSSHPassword, "pw-secret")); err != nil {
				t.Fatal(err)
			}
			state, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(state), "pw-secret") {
				t.Errorf("saved state contains the SSH password: %s", state)
			}
			// Later commands: no credential but the saved one, the one given at create, decoded.
			os.Unsetenv("HARVESTER_KUBECONFIG_CONTENT")
			keptThroughCommands(t, state, configtest.Kubeconfig)
		})
	}
}

// A credential from the environment given to a later command replaces the saved one in memory and drops it from
// the state (Rancher's way: never saved).
func TestCredentialFromTheEnvironmentDropsTheSavedOne(t *testing.T) {
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "")
	os.Unsetenv("HARVESTER_KUBECONFIG_CONTENT")
	d := NewDriver("gc8-pool1-a-b", "/store")
	if err := d.SetConfigFromFlags(configtest.With(configtest.MinimalOptions(), config.FlagVMNamespace, "team-a",
		config.FlagClusterName, "gc8", config.FlagKubeconfigContent, configtest.Kubeconfig)); err != nil {
		t.Fatal(err)
	}
	state, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	rotated := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "rotated-token", 1)
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", base64.StdEncoding.EncodeToString([]byte(rotated)))
	saved, later := savedCredential(t, state)
	if saved != "" {
		t.Errorf("a credential from the environment left the saved one in the state, or was saved itself")
	}
	if string(later.kubeconfig) != rotated {
		t.Errorf("the credential from the environment is not used")
	}
}

// A credential given again on a later command's command line (rancher-machine starts the plugin with its own
// arguments: `rm --update-config --harvester-kubeconfig-content …`) replaces the saved one and is saved instead.
func TestCredentialFlagGivenAgainIsSavedInstead(t *testing.T) {
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "")
	os.Unsetenv("HARVESTER_KUBECONFIG_CONTENT")
	rotated := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "rotated-token", 1)
	args := os.Args
	t.Cleanup(func() { os.Args = args })
	os.Args = []string{"rancher-machine", "rm", "-y", "--update-config", "--" + config.FlagKubeconfigContent, base64.StdEncoding.EncodeToString([]byte(rotated)), "gc8-pool1-a-b"}
	saved, d := savedCredential(t, referenceState(t, configtest.Kubeconfig))
	if saved != rotated {
		t.Errorf("saved credential %q, want the one given on the command line", saved)
	}
	if string(d.kubeconfig) != rotated {
		t.Errorf("the credential given on the command line is not used")
	}
}
