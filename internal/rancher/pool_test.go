package rancher

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A provisioning cluster as `kubectl get clusters.provisioning.cattle.io -n fleet-default gc1 -o json` prints it
// (abridged): each pool's dynamicSchemaSpec is a JSON string, the DynamicSchemaSpec Rancher's cluster controller
// copied when the pool was made (pkg/apis/provisioning.cattle.io/v1/cluster_types.go, RKEMachinePool).
const clusterJSON = `{
  "apiVersion": "provisioning.cattle.io/v1",
  "kind": "Cluster",
  "metadata": {"name": "gc1", "namespace": "fleet-default", "annotations": {"field.cattle.io/creatorId": "user-x"}},
  "spec": {
    "cloudCredentialSecretName": "cattle-global-data:cc-abcde",
    "kubernetesVersion": "v1.32.5+rke2r1",
    "rkeConfig": {
      "machinePools": [
        {"name": "pool1", "quantity": 3, "controlPlaneRole": true, "etcdRole": true, "workerRole": true,
         "machineConfigRef": {"kind": "HarvesterConfig", "name": "nc-gc1-pool1-abcde"},
         "dynamicSchemaSpec": "{\"resourceFields\":{\"cpuCount\":{\"type\":\"string\",\"default\":{\"stringValue\":\"2\",\"intValue\":0,\"boolValue\":false,\"stringSliceValue\":null},\"create\":true,\"update\":true,\"description\":\"number of CPUs\"},\"enableEfi\":{\"type\":\"boolean\",\"default\":{\"stringValue\":\"\",\"intValue\":0,\"boolValue\":false,\"stringSliceValue\":null},\"create\":true,\"update\":true}}}"},
        {"name": "pool2", "machineConfigRef": {"kind": "HarvesterConfig", "name": "nc-gc1-pool2-fghij"}}
      ]
    }
  },
  "status": {"ready": true}
}`

func TestParseClusterAndPoolFor(t *testing.T) {
	c, err := ParseCluster([]byte(clusterJSON))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "gc1" || len(c.Pools) != 2 {
		t.Fatalf("cluster %+v", c)
	}
	p, err := c.PoolFor("HarvesterConfig", "nc-gc1-pool1-abcde", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "pool1" || p.Quantity == nil || *p.Quantity != 3 || !reflect.DeepEqual(p.Schema, Schema{"cpuCount": true, "enableEfi": true}) {
		t.Errorf("pool1: %+v", p)
	}
	if p, err := c.PoolFor("HarvesterConfig", "nc-gc1-pool2-fghij", "pool2"); err != nil || p.Schema != nil || p.Quantity != nil {
		t.Errorf("pool2, without a schema yet: %+v, %v", p, err)
	}
	for _, tc := range []struct{ kind, name, pool, want string }{
		{"HarvesterConfig", "nc-other", "", "no pool of cluster gc1 uses HarvesterConfig nc-other; its pools: pool1 (HarvesterConfig nc-gc1-pool1-abcde), pool2"},
		{"HcivmConfig", "nc-gc1-pool1-abcde", "", "no pool of cluster gc1 uses HcivmConfig"},
		{"HarvesterConfig", "nc-gc1-pool1-abcde", "pool2", "pool pool2 of cluster gc1 uses HarvesterConfig nc-gc1-pool2-fghij, not HarvesterConfig nc-gc1-pool1-abcde"},
		{"HarvesterConfig", "nc-gc1-pool1-abcde", "pool9", "cluster gc1 has no pool pool9"},
	} {
		if _, err := c.PoolFor(tc.kind, tc.name, tc.pool); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PoolFor(%s, %s, %q) = %v, want %q", tc.kind, tc.name, tc.pool, err, tc.want)
		}
	}
	shared := Cluster{Name: "gc1", Pools: []Pool{{Name: "a", ConfigKind: "HarvesterConfig", ConfigName: "x"}, {Name: "b", ConfigKind: "HarvesterConfig", ConfigName: "x"}}}
	if _, err := shared.PoolFor("HarvesterConfig", "x", ""); err == nil || !strings.Contains(err.Error(), "pools a and b of cluster gc1 both use HarvesterConfig x: name one with --pool") {
		t.Errorf("a config two pools share: %v", err)
	}
}

// A cluster of 10,000 pools is named in a line of its first five and the count, not all of them (368 KB).
func TestPoolForNamesAFewPools(t *testing.T) {
	c := Cluster{Name: "gc1"}
	for i := range 10000 {
		c.Pools = append(c.Pools, Pool{Name: fmt.Sprintf("pool%d", i), ConfigKind: "HarvesterConfig", ConfigName: fmt.Sprintf("nc-gc1-pool%d-abcde", i)})
	}
	for pool, want := range map[string]string{
		"":      "no pool of cluster gc1 uses HarvesterConfig nc-other; its pools: pool0 (HarvesterConfig nc-gc1-pool0-abcde), pool1 (HarvesterConfig nc-gc1-pool1-abcde), pool2 (HarvesterConfig nc-gc1-pool2-abcde), pool3 (HarvesterConfig nc-gc1-pool3-abcde), pool4 (HarvesterConfig nc-gc1-pool4-abcde) and 9995 more, 10000 in all",
		"poolX": "cluster gc1 has no pool poolX; its pools: pool0 (HarvesterConfig nc-gc1-pool0-abcde), pool1",
	} {
		_, err := c.PoolFor("HarvesterConfig", "nc-other", pool)
		if err == nil || !strings.HasPrefix(err.Error(), want) || len(err.Error()) > 400 {
			t.Errorf("--pool %q: %d bytes: %.500v, want %q", pool, len(fmt.Sprint(err)), err, want)
		}
	}
	if _, err := (Cluster{Name: "gc1"}).PoolFor("HarvesterConfig", "x", ""); err == nil || !strings.HasSuffix(err.Error(), "; it has no pools") {
		t.Errorf("no pools: %v", err)
	}
}

// A cluster that is no provisioning cluster, a field of the wrong type or a schema that is no JSON is refused,
// naming the place and never the value.
func TestParseClusterRefuses(t *testing.T) {
	const head = `{"apiVersion":"provisioning.cattle.io/v1","kind":"Cluster","spec":{"rkeConfig":{"machinePools":[`
	for _, tc := range []struct{ doc, want string }{
		{`{"apiVersion":"management.cattle.io/v3","kind":"Cluster"}`, `it is apiVersion "management.cattle.io/v3", kind "Cluster"`},
		{head + `{"name":"p","quantity":"three-secret"}]}}}`, "spec.rkeConfig.machinePools.quantity must be a whole number"},
		{head + `{"name":"p","dynamicSchemaSpec":"not-json-secret"}]}}}`, `machinePools[0] (pool "p"): dynamicSchemaSpec is not the JSON of a DynamicSchemaSpec`},
		{`[1]`, "not a provisioning cluster"},
	} {
		_, err := ParseCluster([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("a value reached the error: %v", err)
		}
	}
	if c, err := ParseCluster([]byte(`{"apiVersion":"provisioning.cattle.io/v1","kind":"Cluster","metadata":{"name":"imported"}}`)); err != nil || len(c.Pools) != 0 {
		t.Errorf("a cluster without rkeConfig: %+v, %v", c, err)
	}
}

// Prune keeps only the schema's fields, metadata, kind and apiVersion going with the fields a newer driver added;
// Passes says which dropped values would have reached the command line.
func TestPrune(t *testing.T) {
	schema, err := ParseSchema(`{"resourceFields":{"cpuCount":{"type":"string"},"enableEfi":{"type":"boolean"}},"schemaName":"harvesterconfig"}`)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]any{"apiVersion": "rke-machine-config.cattle.io/v1", "kind": "HarvesterConfig", "metadata": map[string]any{},
		"cpuCount": "2", "enableEfi": false, "enableTpm": true, "zone": ""}
	kept, dropped := Prune(config, schema)
	if !reflect.DeepEqual(kept, map[string]any{"cpuCount": "2", "enableEfi": false}) ||
		!reflect.DeepEqual(dropped, []string{"apiVersion", "enableTpm", "kind", "metadata", "zone"}) {
		t.Errorf("kept %v, dropped %v", kept, dropped)
	}
	if kept, dropped := Prune(config, Schema{}); len(kept) != 0 || len(dropped) != len(config) {
		t.Errorf("a schema without fields keeps %v", kept)
	}
	if got := PruneBySchema(config, []Field{{Name: "cpuCount"}}); !reflect.DeepEqual(got, map[string]any{"cpuCount": "2"}) {
		t.Errorf("PruneBySchema %v", got)
	}
	for v, want := range map[any]bool{"": false, "x": true, false: false, true: true, float64(0): true, nil: false} {
		if Passes(v) != want {
			t.Errorf("Passes(%#v) = %v", v, !want)
		}
	}
	if Passes([]any{}) || Passes([]any{float64(1)}) || !Passes([]any{"a"}) || Passes(map[string]any{"a": "b"}) {
		t.Error("Passes of lists and maps")
	}
	if _, err := ParseSchema("nope"); err == nil {
		t.Error("ParseSchema took no JSON")
	}
}
