package kube

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The managed-DHCP CRDs the test bed installs, mirrored from vm-dhcp-controller (their headers cite the upstream
// files and commit).
const (
	networkIPPoolCRDFile   = "../../../e2e/crds/mirrored/network.harvesterhci.io_ippools.yaml"
	vmNetworkConfigCRDFile = "../../../e2e/crds/mirrored/network.harvesterhci.io_virtualmachinenetworkconfigs.yaml"
)

// The mirrored CRDs and the Go mirror types say the same: group, version, kind and plural, namespaced resources,
// and every field of the mirror types is in the CRD with its JSON type (the types leave fields out, none is made
// up); the headers name the commit dhcpapi.go cites.
func TestNetworkIPPoolMirrorMatchesTheCRD(t *testing.T) {
	src, err := os.ReadFile("dhcpapi.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file  string
		gvk   string
		gvr   string
		types map[string]reflect.Type
	}{
		{networkIPPoolCRDFile, NetworkIPPools.gvk.String(), NetworkIPPools.gvr.String(),
			map[string]reflect.Type{"spec": reflect.TypeFor[NetworkIPPoolSpec](), "status": reflect.TypeFor[NetworkIPPoolStatus]()}},
		{vmNetworkConfigCRDFile, VMNetworkConfigs.gvk.String(), VMNetworkConfigs.gvr.String(),
			map[string]reflect.Type{"spec": reflect.TypeFor[VMNetworkConfigSpec](), "status": reflect.TypeFor[VMNetworkConfigStatus]()}},
	} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		header, _, _ := strings.Cut(string(data), "apiVersion:")
		if commit := "b8c4473721b3f03633ff73375a8487e124c48500"; !strings.Contains(header, commit) || !strings.Contains(string(src), commit) {
			t.Errorf("%s and dhcpapi.go do not both cite commit %s", c.file, commit)
		}
		crd := readCRD(t, data)
		s := crd.Spec
		gvk := s.Group + "/" + s.Versions[0].Name + ", Kind=" + s.Names.Kind
		gvr := s.Group + "/" + s.Versions[0].Name + ", Resource=" + s.Names.Plural
		if gvk != c.gvk || gvr != c.gvr || s.Names.ListKind != s.Names.Kind+"List" || crd.Metadata.Name != s.Names.Plural+"."+s.Group {
			t.Errorf("%s: %s, %s; the mirror says %s, %s", c.file, gvk, gvr, c.gvk, c.gvr)
		}
		if s.Scope != "Namespaced" || len(s.Versions) != 1 || !s.Versions[0].Served || !s.Versions[0].Storage {
			t.Errorf("%s: scope %s, versions %+v; want one namespaced version, served and stored", c.file, s.Scope, s.Versions)
		}
		for part, typ := range c.types {
			schema, _ := field(s.Versions[0].Schema.OpenAPIV3Schema, part)
			got, want := map[string]string{}, map[string]string{}
			schemaFields(schema, part, got)
			goFields(typ, part, want)
			for path, kind := range want {
				if got[path] != kind {
					t.Errorf("%s: %s is %q in the CRD, %q in the mirror", c.file, path, got[path], kind)
				}
			}
		}
	}
}

// mirroredCRD is what the tests read of a mirrored CRD.
type mirroredCRD struct {
	Metadata struct{ Name string }
	Spec     struct {
		Group string
		Names struct{ Kind, ListKind, Plural string }
		Scope string
		// Versions keeps each version's schema as a plain tree.
		Versions []struct {
			Name    string
			Served  bool
			Storage bool
			Schema  struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			}
		}
	}
}

func readCRD(t *testing.T, data []byte) mirroredCRD {
	t.Helper()
	var crd mirroredCRD
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) == 0 {
		t.Fatalf("CRD %s has no version", crd.Metadata.Name)
	}
	return crd
}
