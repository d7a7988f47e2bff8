package harvester

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
)

func secondName(t *testing.T) identity.Identity {
	t.Helper()
	id, err := IdentityFromExecutable("/usr/local/bin/docker-machine-driver-" + identity.Release)
	if err != nil || !id.Renamed() || id.Name() != identity.Release {
		t.Fatalf("identity of docker-machine-driver-%s: %q, %v", identity.Release, id.Name(), err)
	}
	return id
}

// renamedOptions is opts as rancher-machine hands them to a plugin named id: every flag, keyed by id's names.
func renamedOptions(id identity.Identity, opts config.Options) config.Options {
	full := config.DefaultOptions()
	for k, v := range opts {
		full[k] = v
	}
	out := config.Options{}
	for k, v := range full {
		out[id.Flag(k)] = v
	}
	return out
}

func TestSecondNameReloadsItsOwnCredentialVariable(t *testing.T) {
	id := secondName(t)
	legacy := `{"MachineName":"m1","VMNamespace":"team-a"}`
	rotated := strings.Replace(configtest.Kubeconfig, "not-a-real-token", "rotated-token", 1)
	t.Setenv("HARVESTER_KUBECONFIG_CONTENT", "the canonical driver's variable, not this one's")
	t.Setenv("HCIVM_KUBECONFIG_CONTENT", base64.StdEncoding.EncodeToString([]byte(rotated)))
	d := NewNamedDriver(id, "", "")
	if err := json.Unmarshal([]byte(legacy), d); err != nil {
		t.Fatal(err)
	}
	if string(d.kubeconfig) != rotated || d.credentialErr != nil {
		t.Fatalf("the credential from $HCIVM_KUBECONFIG_CONTENT is not used (err %v)", d.credentialErr)
	}
	if d.DriverName() != identity.Release {
		t.Errorf("DriverName after loading = %q", d.DriverName())
	}
	saved, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(saved), "rotated-token") {
		t.Errorf("the credential from the environment is saved: %s", saved)
	}

	t.Setenv("HCIVM_KUBECONFIG_CONTENT", "not a kubeconfig: [")
	d = NewNamedDriver(id, "", "")
	if err := json.Unmarshal([]byte(legacy), d); err != nil {
		t.Fatal(err)
	}
	if d.credentialErr == nil || !strings.Contains(d.credentialErr.Error(), "$HCIVM_KUBECONFIG_CONTENT") || strings.Contains(d.credentialErr.Error(), "HARVESTER_") {
		t.Errorf("credentialErr = %v; want it to name $HCIVM_KUBECONFIG_CONTENT only", d.credentialErr)
	}
}

func TestSecondNamePreCreateCheckNamesItsFlags(t *testing.T) {
	id := secondName(t)
	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	opts := configtest.With(createOptions(), config.FlagVMNamespace, "team-x", config.FlagImageName, "default/ubuntu", config.FlagNetworkName, "default/vlan1")
	d := NewNamedDriver(id, "m1", t.TempDir())
	if err := d.SetConfigFromFlags(renamedOptions(id, opts)); err != nil {
		t.Fatal(err)
	}
	d.clients = fc.C
	err := d.PreCreateCheck()
	if err == nil || !strings.Contains(err.Error(), "--hcivm-vm-namespace: namespace team-x does not exist in Harvester") || strings.Contains(err.Error(), "--harvester-") {
		t.Fatalf("PreCreateCheck under the second name: %v", err)
	}
	// The canonical driver given the same values under the second name's keys reads none of them.
	canonical := NewDriver("m1", t.TempDir())
	if err := canonical.SetConfigFromFlags(renamedOptions(id, opts)); err == nil || !strings.Contains(err.Error(), "--harvester-image-name") {
		t.Errorf("the canonical driver read the second name's flags: %v", err)
	}
}

// The canonical identity names every flag's environment variable exactly as the flag table does.
func TestCanonicalIdentityKeepsTheFlagTablesNames(t *testing.T) {
	var canonical identity.Identity
	for _, f := range config.CreateFlags() {
		if got, want := canonical.EnvVar(f.String()), config.EnvVar(f.String()); got != want {
			t.Errorf("%s: identity's variable %q, the flag table's %q", f.String(), got, want)
		}
		if canonical.Flag(f.String()) != f.String() {
			t.Errorf("%s renamed by the canonical identity", f.String())
		}
	}
	if NewDriver("", "").DriverName() != "harvester" {
		t.Errorf("the driver's own name is not harvester")
	}
}
