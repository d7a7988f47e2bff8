package kube

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// kubeOVNModule publishes the Subnet CRD the test bed installs (e2e/upstream KubeOVNSubnetCRD), at the version the
// root module's build list selects through github.com/harvester/harvester.
const (
	kubeOVNModule   = "github.com/kubeovn/kube-ovn"
	kubeOVNCRDsFile = "charts/kube-ovn-v2/crds/kube-ovn-crd.yaml"
)

// The Subnet mirror says what Kube-OVN's Subnet CRD says: group, version, kind, plural, cluster scope, a status
// subresource, and every field the mirror reads with its JSON type (the CRD has many more, which the driver does
// not read). The CRD is read from the module in the Go module cache, as the test bed reads it.
func TestSubnetMirrorMatchesTheCRD(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(moduleDir(t, kubeOVNModule), kubeOVNCRDsFile))
	if err != nil {
		t.Fatal(err)
	}
	type crdDoc struct {
		Metadata struct{ Name string }
		Spec     struct {
			Group    string
			Names    struct{ Kind, ListKind, Plural string }
			Scope    string
			Versions []struct {
				Name         string
				Served       bool
				Storage      bool
				Subresources map[string]any
				Schema       struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	var crd *crdDoc
	for _, doc := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(data), -1) {
		var d crdDoc
		if yaml.Unmarshal([]byte(doc), &d) == nil && d.Metadata.Name == Subnets.gvr.Resource+"."+Subnets.gvr.Group {
			crd = &d
		}
	}
	if crd == nil {
		t.Fatalf("%s holds no CRD %s.%s", kubeOVNCRDsFile, Subnets.gvr.Resource, Subnets.gvr.Group)
	}
	s := crd.Spec
	if s.Group != Subnets.gvr.Group || s.Names.Kind != Subnets.gvk.Kind || s.Names.Plural != Subnets.gvr.Resource {
		t.Errorf("CRD: group %s, kind %s, plural %s; the mirror says %v, %v", s.Group, s.Names.Kind, s.Names.Plural, Subnets.gvk, Subnets.gvr)
	}
	if s.Scope != "Cluster" {
		t.Errorf("CRD scope %q, want Cluster (the pre-flight lists Subnets without a namespace)", s.Scope)
	}
	if len(s.Versions) != 1 || s.Versions[0].Name != Subnets.gvr.Version || !s.Versions[0].Served || !s.Versions[0].Storage {
		t.Fatalf("CRD versions %+v, want %s alone, served and stored", s.Versions, Subnets.gvr.Version)
	}
	if _, ok := s.Versions[0].Subresources["status"]; !ok {
		t.Error("the CRD has no status subresource")
	}
	got := map[string]string{}
	root := s.Versions[0].Schema.OpenAPIV3Schema
	for _, part := range []string{"spec", "status"} {
		schema, _ := field(root, part)
		schemaFields(schema, part, got)
	}
	want := map[string]string{}
	goFields(reflect.TypeFor[SubnetSpec](), "spec", want)
	goFields(reflect.TypeFor[SubnetStatus](), "status", want)
	for path, typ := range want {
		if got[path] != typ {
			t.Errorf("the mirror reads %s as %s; the CRD has %q", path, typ, got[path])
		}
	}
}

// moduleDir is the directory of module path in the module cache, at the version the build list selects; the
// module is downloaded when the cache lacks it.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	var m struct{ Path, Version, Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if m.Dir != "" {
		return m.Dir
	}
	cmd := exec.Command("go", "mod", "download", "-json", m.Path+"@"+m.Version)
	cmd.Dir = t.TempDir() // outside the module: the download leaves go.mod and go.sum alone
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("go mod download %s@%s: %v", m.Path, m.Version, err)
	}
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s@%s: %s", m.Path, m.Version, bytes.TrimSpace(out))
	}
	return m.Dir
}

// Kube-OVN's networks are told by their CNI type (or a plugin's), and named as Kube-OVN names them whatever the
// configuration's provider says; others are not Kube-OVN's; a configuration that is no JSON, or beyond any
// Harvester's size, is an error that names the network.
func TestKubeOVNProvider(t *testing.T) {
	nad := func(config string) *NetworkAttachmentDefinition {
		n := &NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ovn1"}}
		n.Spec.Config = config
		return n
	}
	for _, c := range []struct {
		config, provider string
		ovn              bool
		err              string
	}{
		{`{"cniVersion":"0.3.1","name":"ovn1","type":"kube-ovn","provider":"ovn1.default.ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock"}`, "ovn1.default.ovn", true, ""},
		{`{"type":"kube-ovn","provider":"other.ns.ovn"}`, "ovn1.default.ovn", true, ""},
		{`{"cniVersion":"0.3.1","plugins":[{"type":"kube-ovn"},{"type":"portmap"}]}`, "ovn1.default.ovn", true, ""},
		{`{"cniVersion":"0.3.1","name":"vlan1","type":"bridge","bridge":"mgmt-br","vlan":1,"ipam":{}}`, "", false, ""},
		{`{"type":"macvlan","ipam":{"type":"kube-ovn"}}`, "", false, ""},
		{`not json`, "", false, "network default/ovn1: its CNI configuration is no JSON document"},
		{`{"type":"kube-ovn","x":"` + strings.Repeat("a", maxNetworkConfig) + `"}`, "", false, "more than the 65536 any Harvester network has"},
	} {
		provider, ovn, err := nad(c.config).KubeOVNProvider()
		if provider != c.provider || ovn != c.ovn || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%.60s: %q %v %v; want %q %v %q", c.config, provider, ovn, err, c.provider, c.ovn, c.err)
		}
	}
}
