package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every upstream manifest loads from the module the root go.mod pins, and together they hold what the test bed
// needs: Harvester's three CRDs, its two ClusterRoles with their rules, the NetworkAttachmentDefinition CRD, and
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
	if len(objs) != 14 {
		t.Errorf("loaded %d objects, want 14", len(objs))
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
