package config_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

func TestParseSSHKeyPairs(t *testing.T) {
	tests := []struct {
		name  string
		extra []any
		want  []Ref
	}{
		{"none", nil, nil},
		{"blank", []any{FlagSSHKeyPairs, " , "}, nil},
		// A bare name is in the VM namespace, as every reference flag has it.
		{"names and refs", []any{FlagVMNamespace, "team-a", FlagSSHKeyPairs, "alice, ops/bob,carol.k"},
			[]Ref{{"team-a", "alice"}, {"ops", "bob"}, {"team-a", "carol.k"}}},
		// The same key pair twice, however written, is installed once.
		{"duplicates folded", []any{FlagSSHKeyPairs, "alice,default/alice,bob,alice"}, []Ref{{"default", "alice"}, {"default", "bob"}}},
		// --harvester-key-pair-name installs its key already.
		{"primary folded", []any{FlagKeyPairName, "ops", FlagSSHKeyPairs, "default/ops,alice"}, []Ref{{"default", "alice"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := configtest.With(configtest.MinimalOptions(), tt.extra...)
			if o.String(FlagKeyPairName) != "" {
				o[FlagSSHPrivateKeyPath] = configtest.WriteKey(t, false)
			}
			cfg, err := ParseConfig("m1", o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.SSH.ExtraKeyPairs, tt.want) {
				t.Errorf("ExtraKeyPairs = %v, want %v", cfg.SSH.ExtraKeyPairs, tt.want)
			}
		})
	}
}

func TestParseSSHKeyPairsRejects(t *testing.T) {
	names := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("person-%d", i)
		}
		return strings.Join(s, ",")
	}
	if cfg, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), FlagSSHKeyPairs, names(MaxExtraKeyPairs))); err != nil || len(cfg.SSH.ExtraKeyPairs) != MaxExtraKeyPairs {
		t.Fatalf("%d key pairs must parse: %v", MaxExtraKeyPairs, err)
	}
	tests := []struct{ value, want string }{
		{"a/b/c", `key pair must be namespace/name or name, got "a/b/c" (more than one /)`},
		{"alice,/bob", `got "/bob" (empty namespace)`},
		{"ops/", `got "ops/" (empty name)`},
		{"Ops/alice", `namespace "Ops" of "Ops/alice" is not a valid namespace name`},
		{"Alice", `name "Alice" of "Alice" is not a valid Kubernetes name`},
		{names(MaxExtraKeyPairs + 1), "names more than 32 key pairs"},
	}
	for _, tt := range tests {
		_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), FlagSSHKeyPairs, tt.value))
		var cerr *ConfigError
		if !errors.As(err, &cerr) {
			t.Fatalf("%.40q: want a *ConfigError, got %v", tt.value, err)
		}
		found := false
		for _, p := range cerr.Problems {
			found = found || p.Flag == FlagSSHKeyPairs && strings.Contains(p.Message, tt.want)
		}
		if !found {
			t.Errorf("%.40q: no problem on --%s containing %q; got:\n%v", tt.value, FlagSSHKeyPairs, tt.want, err)
		}
	}
}
