package rancher

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ConfigGroup is the API group of machine-config objects (dynamicschema.go, MachineConfigAPIGroup).
const ConfigGroup = "rke-machine-config.cattle.io"

// ConfigKind is the kind of driver's machine-config objects: "<driver>Config" capitalised (getSchemas,
// addConfigSchema and getCRD in dynamicschema.go), HarvesterConfig for harvester.
func ConfigKind(driver string) string {
	return strings.ToUpper(driver[:1]) + driver[1:] + "Config"
}

// ConfigResource is the plural resource name of driver's machine-config objects, as wrangler's crd.CRD guesses
// it from the kind (pkg/name GuessPluralName, lowercased) for a kind that ends in "Config": an "s" added,
// harvesterconfigs.
func ConfigResource(driver string) string {
	return strings.ToLower(ConfigKind(driver)) + "s"
}

// ConfigCRD is driver's machine-config CustomResourceDefinition as Rancher makes it from the driver's fields:
// getConfigCRD (dynamicschema.go) turns the config schema into OpenAPI with wrangler's openapi.ToOpenAPI
// (rancher/wrangler v3.7.1 pkg/schemas/openapi/generate.go: schemaToProps, typeToProps, populateField) and into
// a CRD with crd.CRD.ToCustomResourceDefinition (pkg/crd/init.go): one version v1, served and stored, namespaced,
// no status subresource (the config schema has no status field), the schema structural, so the API server drops
// unknown fields and fills in each field's default.
func ConfigCRD(driver string, fields []Field) *unstructured.Unstructured {
	kind := ConfigKind(driver)
	props := map[string]any{}
	for _, f := range fields {
		props[f.Name] = fieldProps(f)
	}
	// addConfigSchema's description, with the schema id "<driver>Config" capitalised.
	desc := kind + " represents the desired configuration of each machine provisioned within a machine pool associated with a provisioning.cattle.io cluster."
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name": ConfigResource(driver) + "." + ConfigGroup,
			// getCRD's labels.
			"labels": map[string]any{
				"cluster.x-k8s.io/v1beta1":       "v1",
				"cluster.x-k8s.io/v1beta2":       "v1",
				"auth.cattle.io/cluster-indexed": "true",
			},
		},
		"spec": map[string]any{
			"group": ConfigGroup,
			"names": map[string]any{
				"kind":     kind,
				"plural":   ConfigResource(driver),
				"singular": strings.ToLower(kind),
			},
			"scope":                 "Namespaced",
			"preserveUnknownFields": false,
			"versions": []any{map[string]any{
				"name":    "v1",
				"served":  true,
				"storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":        "object",
					"description": desc,
					"properties":  props,
				}},
			}},
		},
	}}
}

// fieldProps is one field's OpenAPI schema: typeToProps (string and array[string] are nullable, a boolean is
// not) and populateField (the description, and the default whenever the field has one).
func fieldProps(f Field) map[string]any {
	var p map[string]any
	switch f.Type {
	case "boolean":
		p = map[string]any{"type": "boolean"}
	case "array[string]":
		p = map[string]any{"type": "array", "nullable": true, "items": map[string]any{"type": "string", "nullable": true}}
	default: // string, password
		p = map[string]any{"type": "string", "nullable": true}
	}
	if f.Description != "" {
		p["description"] = f.Description
	}
	if f.Default != nil {
		p["default"] = jsonValue(f.Default)
	}
	return p
}

// jsonValue turns a default into the form unstructured content holds ([]string into []any).
func jsonValue(v any) any {
	if s, ok := v.([]string); ok {
		out := make([]any, len(s))
		for i, e := range s {
			out[i] = e
		}
		return out
	}
	return v
}

// Defaults is what the API server makes of an empty machine config under ConfigCRD(driver, fields): each
// field that has a default, holding it.
func Defaults(fields []Field) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		if f.Default != nil {
			out[f.Name] = jsonValue(f.Default)
		}
	}
	return out
}
