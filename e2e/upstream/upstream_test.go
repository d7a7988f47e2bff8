package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every upstream manifest loads from the module the root go.mod pins, and together they hold what the test bed
// needs: Harvester's three CRDs, its two ClusterRoles with their rules, the NetworkAttachmentDefinition CRD,
// Kube-OVN's Subnet CRD alone of its chart's many (cluster-scoped, with the fields the pre-flight reads), and
// KubeVirt's two CRDs with structural schemas (a typed spec.template.spec.domain.cpu.cores).
func TestLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // a first run builds the kubevirt tool
	defer cancel()
	objs, err := Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		got[o.GetKind()+"/"+o.GetName()] = o
	}
	for _, want := range []string{
		"CustomResourceDefinition/keypairs.harvesterhci.io",
		"CustomResourceDefinition/settings.harvesterhci.io",
		"CustomResourceDefinition/virtualmachineimages.harvesterhci.io",
		"CustomResourceDefinition/network-attachment-definitions.k8s.cni.cncf.io",
		"CustomResourceDefinition/subnets.kubeovn.io",
		"CustomResourceDefinition/virtualmachines.kubevirt.io",
		"CustomResourceDefinition/virtualmachineinstances.kubevirt.io",
		"CustomResourceDefinition/kubevirts.kubevirt.io",
		"CustomResourceDefinition/virtualmachineinstancetypes.instancetype.kubevirt.io",
		"CustomResourceDefinition/virtualmachineclusterinstancetypes.instancetype.kubevirt.io",
		"CustomResourceDefinition/virtualmachinepreferences.instancetype.kubevirt.io",
		"CustomResourceDefinition/virtualmachineclusterpreferences.instancetype.kubevirt.io",
		"CustomResourceDefinition/virtualmachineinstancemigrations.kubevirt.io",
		"ClusterRole/harvesterhci.io:cloudprovider",
		"ClusterRole/harvesterhci.io:csi-driver",
	} {
		if got[want] == nil {
			t.Errorf("%s is missing (loaded %d objects)", want, len(objs))
		}
	}
	if len(objs) != 15 {
		t.Errorf("loaded %d objects, want 15", len(objs))
	}
	if subnet := got["CustomResourceDefinition/subnets.kubeovn.io"]; subnet != nil {
		if scope, _, _ := unstructured.NestedString(subnet.Object, "spec", "scope"); scope != "Cluster" {
			t.Errorf("Subnet CRD scope %q, want Cluster", scope)
		}
		versions, _, _ := unstructured.NestedSlice(subnet.Object, "spec", "versions")
		if len(versions) != 1 {
			t.Fatalf("Subnet CRD versions: %d, want 1", len(versions))
		}
		v := versions[0].(map[string]any)
		props := func(of string) map[string]any {
			p, _, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema", "properties", of, "properties")
			return p
		}
		for of, fields := range map[string][]string{
			"spec":   {"provider", "cidrBlock", "gateway", "excludeIps", "protocol", "enableDHCP"},
			"status": {"v4availableIPs", "v6availableIPs", "v4usingIPs", "v6usingIPs", "conditions"},
		} {
			for _, f := range fields {
				if props(of)[f] == nil {
					t.Errorf("Subnet CRD %s has no field %s", of, f)
				}
			}
		}
		if _, ok, _ := unstructured.NestedMap(v, "subresources", "status"); !ok {
			t.Error("Subnet CRD has no status subresource")
		}
	}
	if role := got["ClusterRole/harvesterhci.io:cloudprovider"]; role != nil {
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		if len(rules) == 0 {
			t.Error("ClusterRole harvesterhci.io:cloudprovider has no rules")
		}
		if labels := role.GetLabels(); labels["app.kubernetes.io/name"] != "harvester" {
			t.Errorf("ClusterRole labels %v: the chart's literal labels were lost", labels)
		}
	}
	if vm := got["CustomResourceDefinition/virtualmachines.kubevirt.io"]; vm != nil {
		versions, _, _ := unstructured.NestedSlice(vm.Object, "spec", "versions")
		for _, v := range versions {
			typ, _, _ := unstructured.NestedString(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "spec",
				"properties", "template", "properties", "spec", "properties", "domain", "properties", "cpu", "properties", "cores", "type")
			if typ != "integer" {
				t.Errorf("VirtualMachine CRD version %v: cpu.cores has type %q, want integer (a structural schema)", v.(map[string]any)["name"], typ)
			}
		}
	}
}

// A Helm template's wanted ClusterRoles are taken whole, lines of template actions dropped; other documents,
// even unreadable ones, are passed over; template syntax within a wanted document's lines, or a missing name,
// is an error that names the role.
func TestClusterRoles(t *testing.T) {
	tmpl := `{{- if .Values.enabled }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
{{ include "harvester.labels" . | indent 4 }}
    app: x
  # name: {{ template "fullname" . }}
  name: wanted
rules: []
---
kind: ClusterRole
metadata:
  name: other
  namespace: {{ .Release.Namespace }}
---
kind: Deployment
spec: {{ toYaml .Values.x | nindent 2 }}
{{- end }}
`
	out, err := clusterRoles([]byte(tmpl), "wanted")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "include") || !strings.Contains(string(out), "app: x") || strings.Contains(string(out), "other") {
		t.Errorf("extracted:\n%s", out)
	}
	if _, err := clusterRoles([]byte(tmpl), "wanted", "absent"); err == nil || !strings.Contains(err.Error(), "no ClusterRole absent") {
		t.Errorf("missing role: err %v", err)
	}
	inline := strings.Replace(tmpl, "rules: []", "rules: {{ .Values.rules }}", 1)
	if _, err := clusterRoles([]byte(inline), "wanted"); err == nil || !strings.Contains(err.Error(), "ClusterRole wanted") {
		t.Errorf("inline template syntax: err %v", err)
	}
}

// A file's wanted CRDs are kept in order, the others dropped; a missing name is an error that names it.
func TestCRDsNamed(t *testing.T) {
	obj := func(kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		u.SetName(name)
		return u
	}
	objs := []*unstructured.Unstructured{obj("CustomResourceDefinition", "vpcs.kubeovn.io"), obj("CustomResourceDefinition", "subnets.kubeovn.io"),
		obj("ClusterRole", "subnets.kubeovn.io")}
	got, err := crdsNamed(objs, "subnets.kubeovn.io")
	if err != nil || len(got) != 1 || got[0] != objs[1] {
		t.Errorf("crdsNamed = %v, %v; want the Subnet CRD alone", got, err)
	}
	if _, err := crdsNamed(objs, "subnets.kubeovn.io", "ips.kubeovn.io"); err == nil || !strings.Contains(err.Error(), "ips.kubeovn.io") {
		t.Errorf("missing CRD: err %v", err)
	}
}
