package rancher

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/mcnflag"
)

// The two field → flag rules part on a digit before a capital, the case regExHyphen's comment in args.go gives.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		field          string
		before, since  string
		envKey, envNew string
	}{
		{"sshUser", "--amazonec2-ssh-user", "--amazonec2-ssh-user", "sshUser", "AMAZONEC2_SSH_USER"},
		{"ipv6AddressCount", "--amazonec2-ipv6address-count", "--amazonec2-ipv6-address-count", "x-ipv6AddressCount", "AMAZONEC2_IPV6_ADDRESS_COUNT"},
	} {
		if got := Before213.Flag("amazonec2", tc.field); got != tc.before {
			t.Errorf("before 2.13, %s → %s, want %s", tc.field, got, tc.before)
		}
		if got := Since213.Flag("amazonec2", tc.field); got != tc.since {
			t.Errorf("since 2.13, %s → %s, want %s", tc.field, got, tc.since)
		}
		if got := Since213.Env("amazonec2", tc.envKey); got != tc.envNew {
			t.Errorf("since 2.13, key %s → $%s, want $%s", tc.envKey, got, tc.envNew)
		}
	}
	for _, bad := range []string{"nodash", "harvester-a--b"} {
		if _, err := FieldName(bad); err == nil {
			t.Errorf("FieldName(%q) gave no error", bad)
		}
	}
	if got, _ := FieldName("harvester-cloud-provider-for-rke2"); got != "cloudProviderForRke2" {
		t.Errorf("field %q, want cloudProviderForRke2", got)
	}
}

// Every kind of flag declares a default, its zero value included, except a string slice without a value.
func TestFieldDefaults(t *testing.T) {
	for _, tc := range []struct {
		flag      mcnflag.Flag
		typ       string
		def       any
		noDefault bool
	}{
		{&mcnflag.StringFlag{Name: "harvester-zone"}, "string", "", false},
		{&mcnflag.StringFlag{Name: "harvester-os", Value: "linux"}, "string", "linux", false},
		{&mcnflag.IntFlag{Name: "harvester-create-timeout"}, "string", "0", false},
		{&mcnflag.IntFlag{Name: "harvester-create-timeout", Value: 900}, "string", "900", false},
		{&mcnflag.BoolFlag{Name: "harvester-enable-efi"}, "boolean", false, false},
		{&mcnflag.StringSliceFlag{Name: "harvester-tags"}, "array[string]", nil, true},
		{&mcnflag.StringSliceFlag{Name: "harvester-tags", Value: []string{"a"}}, "array[string]", []string{"a"}, false},
		{&mcnflag.StringFlag{Name: "harvester-kubeconfig-content"}, "password", "", false},
	} {
		f, err := FieldOf(tc.flag)
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != tc.typ || !reflect.DeepEqual(f.Default, tc.def) {
			t.Errorf("%s: type %s default %#v, want %s %#v", tc.flag.String(), f.Type, f.Default, tc.typ, tc.def)
		}
		props := fieldProps(f)
		if _, has := props["default"]; has == tc.noDefault {
			t.Errorf("%s: CRD property %v, want a default: %v", tc.flag.String(), props, !tc.noDefault)
		}
	}
}

func TestToArgsAndHash(t *testing.T) {
	spec := map[string]any{
		"cpuCount": "2", "diskSize": "0", "userData": "", "enableEfi": false, "enableTpm": true,
		"providerID": "harvester://x", "common": map[string]any{"labels": nil}, "tags": []any{"a", "b"},
		"clusterName": "", "unsetNull": nil, "memorySize": float64(4),
	}
	got := strings.Join(ToArgs("harvester", spec, "c1", Since213), " ")
	want := "--harvester-cluster-name=c1 --harvester-cpu-count=2 --harvester-disk-size=0 --harvester-enable-tpm --harvester-memory-size=4 --harvester-tags=a --harvester-tags=b"
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	hashed := HashedSpec(spec)
	for _, k := range []string{"userData", "common", "clusterName", "unsetNull"} {
		if _, ok := hashed[k]; ok {
			t.Errorf("hashed spec keeps %s", k)
		}
	}
	if v, ok := hashed["enableEfi"]; !ok || v != false {
		t.Errorf("hashed spec must keep enableEfi: false (PruneEmpty keeps false), got %v", hashed)
	}
}
