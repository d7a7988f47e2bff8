package config_test

import (
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// A data Secret flag names a Secret of the VM namespace, with or without its key; without one the usual keys
// are read, KubeVirt's, in its order.
func TestParseDataSecrets(t *testing.T) {
	name253, key253 := strings.Repeat("a", 253), strings.Repeat("K", 253)
	tests := []struct {
		name, flag, value, ns string
		want                  SecretKeyRef
		keys                  string
		shown                 string
	}{
		{"name", FlagUserDataSecret, "cloud-init-pool1", "", SecretKeyRef{Namespace: "default", Name: "cloud-init-pool1", Flag: FlagUserDataSecret},
			"userdata,userData", "Secret default/cloud-init-pool1"},
		{"name and key, blanks around", FlagUserDataSecret, " pool1.secrets:user_data-v2.yaml ", "", SecretKeyRef{Namespace: "default", Name: "pool1.secrets", Key: "user_data-v2.yaml", Flag: FlagUserDataSecret},
			"user_data-v2.yaml", "Secret default/pool1.secrets, key user_data-v2.yaml"},
		{"network data, another VM namespace", FlagNetworkDataSecret, "net", "team1", SecretKeyRef{Namespace: "team1", Name: "net", Flag: FlagNetworkDataSecret},
			"networkdata,networkData", "Secret team1/net"},
		{"the longest name and key", FlagNetworkDataSecret, name253 + ":" + key253, "", SecretKeyRef{Namespace: "default", Name: name253, Key: key253, Flag: FlagNetworkDataSecret},
			key253, "Secret default/" + name253 + ", key " + key253},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := configtest.With(configtest.MinimalOptions(), tt.flag, tt.value)
			if tt.ns != "" {
				opts = configtest.With(opts, FlagVMNamespace, tt.ns, FlagImageName, "default/ubuntu")
			}
			cfg, err := ParseConfig("m1", opts)
			if err != nil {
				t.Fatal(err)
			}
			ref, other := cfg.UserDataSecret, cfg.NetworkDataSecret
			if tt.flag == FlagNetworkDataSecret {
				ref, other = other, ref
			}
			if ref == nil || *ref != tt.want || other != nil {
				t.Fatalf("refs %+v and %+v, want %+v and none", ref, other, tt.want)
			}
			if got := strings.Join(ref.Keys(), ","); got != tt.keys {
				t.Errorf("keys read: %s, want %s", got, tt.keys)
			}
			if ref.String() != tt.shown {
				t.Errorf("named %q, want %q", ref.String(), tt.shown)
			}
			if cfg.UserData != nil || cfg.NetworkData != nil {
				t.Errorf("the parse holds data: user %q, network %q", cfg.UserData, cfg.NetworkData)
			}
		})
	}
}

// Each value a data Secret flag refuses says the form it takes, naming the flag; a value that looks like the data
// itself is never quoted.
func TestParseDataSecretsRefuses(t *testing.T) {
	const form = "must name a Secret in the VM namespace default as NAME or NAME:KEY"
	pasted := "#cloud-config\nchpasswd: {list: 'root:PLANTEDhunter2'}\n"
	tests := []struct {
		name, flag, value string
		want              []string
	}{
		{"another namespace", FlagUserDataSecret, "kube-system/bootstrap", []string{
			`--harvester-user-data-secret: ` + form + `, got "kube-system/bootstrap": a Secret of another namespace is not read`}},
		{"not a name", FlagNetworkDataSecret, "Net_Data", []string{
			`--harvester-network-data-secret: ` + form + `, got "Net_Data": NAME must be a Secret's name`}},
		{"empty key", FlagUserDataSecret, "ud:", []string{`--harvester-user-data-secret: ` + form + `, got "ud:": KEY must be a Secret's key`}},
		{"key with a slash", FlagUserDataSecret, "ud:a/b", []string{`got "ud:a/b": KEY must be a Secret's key`}},
		{"key ..", FlagUserDataSecret, "ud:..", []string{`got "ud:..": KEY must be a Secret's key`}},
		{"bad name and key", FlagUserDataSecret, "UD:a b", []string{`NAME must be a Secret's name`, `KEY must be a Secret's key`}},
		{"a name too long", FlagUserDataSecret, strings.Repeat("a", 254), []string{`NAME must be a Secret's name`}},
		{"the data pasted", FlagUserDataSecret, pasted, []string{
			"--harvester-user-data-secret: " + form + " (at most 507 characters on one line), got a value of 53 characters, not shown; put the data into the Secret, and its name here"}},
		{"a long line", FlagNetworkDataSecret, strings.Repeat("n", 508), []string{"got a value of 508 characters, not shown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), tt.flag, tt.value))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "PLANTED") {
				t.Errorf("the error quotes the value: %v", err)
			}
		})
	}
}

// The user data and the network data each come from their flag or their Secret, never both; a network-data
// Secret does not go with the IP pool, whose address the driver writes into the network data. Each refusal names
// both flags, also when the Secret flag's value did not parse.
func TestDataSecretsExclusive(t *testing.T) {
	min := configtest.MinimalOptions
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"user data twice", configtest.With(min(), FlagUserData, "#cloud-config\ntimezone: UTC\n", FlagUserDataSecret, "ud"), []string{
			"--harvester-user-data-secret: cannot go with --harvester-user-data: give the user data inline or in a Secret, not both"}},
		{"network data twice", configtest.With(min(), FlagNetworkData, "version: 2\n", FlagNetworkDataSecret, "nd"), []string{
			"--harvester-network-data-secret: cannot go with --harvester-network-data: give the network data inline or in a Secret, not both"}},
		{"a bad Secret flag with the inline one", configtest.With(min(), FlagUserData, "#cloud-config\n", FlagUserDataSecret, "a/b"), []string{
			`--harvester-user-data-secret: must name a Secret`, "--harvester-user-data-secret: cannot go with --harvester-user-data"}},
		{"network data Secret and IP pool", configtest.With(min(), FlagNetworkDataSecret, "nd", FlagIPPool, "10.0.0.0/24"), []string{
			"--harvester-network-data-secret: cannot go with --harvester-ip-pool, which writes the first NIC's static address into the network data: " +
				"give the network data inline with --harvester-network-data (version 2, its ethernets matched by macaddress), or drop one of the two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantRefused(t, tt.opts, tt.want...) })
	}
	// Each Secret goes with the other kind of data inline, and the user-data Secret with the pool.
	for _, opts := range []Options{
		configtest.With(min(), FlagUserDataSecret, "ud", FlagNetworkData, "version: 2\n"),
		configtest.With(min(), FlagNetworkDataSecret, "nd", FlagUserData, "#cloud-config\n"),
		configtest.With(min(), FlagUserDataSecret, "ud", FlagIPPool, "10.0.0.0/24"),
		configtest.With(min(), FlagUserDataSecret, "cloud-init", FlagNetworkDataSecret, "cloud-init"), // one Secret for both, as Terraform's examples have it
	} {
		if _, err := ParseConfig("m1", opts); err != nil {
			t.Errorf("refused: %v", err)
		}
	}
}

// WithSecretData gives a create's copy of the Config what the Secrets held, naming the keys read; the Config it
// copies is left as it was.
func TestWithSecretData(t *testing.T) {
	cfg, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), FlagUserDataSecret, "ud", FlagNetworkDataSecret, "nd:net"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.WithSecretData(&SecretValue{Key: "userData", Data: []byte("#cloud-config\n")}, &SecretValue{Key: "net", Data: []byte("version: 2\n")})
	if string(got.UserData) != "#cloud-config\n" || string(got.NetworkData) != "version: 2\n" ||
		got.UserDataSecret.String() != "Secret default/ud, key userData" || got.NetworkDataSecret.String() != "Secret default/nd, key net" {
		t.Errorf("copy: user %q from %s, network %q from %s", got.UserData, got.UserDataSecret, got.NetworkData, got.NetworkDataSecret)
	}
	if cfg.UserData != nil || cfg.NetworkData != nil || cfg.UserDataSecret.Key != "" || got.UserDataFlag() != FlagUserDataSecret {
		t.Errorf("the parsed Config changed: %+v, %s", cfg.UserDataSecret, cfg.UserData)
	}
	inline, err := ParseConfig("m1", configtest.MinimalOptions())
	if err != nil || inline.UserDataFlag() != FlagUserData {
		t.Errorf("the user data's flag without a Secret: %v %v", inline.UserDataFlag(), err)
	}
}
