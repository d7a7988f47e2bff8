package rancher

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// ClusterGroupVersion is the apiVersion of Rancher's provisioning clusters, the objects whose
// spec.rkeConfig.machinePools hold the pools (pkg/apis/provisioning.cattle.io/v1/cluster_types.go).
const ClusterGroupVersion = "provisioning.cattle.io/v1"

// Schema is a pool's copy of the driver's schema: the names of the fields of its DynamicSchemaSpec
// (resourceFields, pkg/apis/management.cattle.io/v3/schema_types.go), the only keys of a machine config that
// Rancher keeps (Prune).
type Schema map[string]bool

// ParseSchema reads a DynamicSchemaSpec as a pool keeps it: the JSON string of
// spec.rkeConfig.machinePools[].dynamicSchemaSpec (cluster_types.go, RKEMachinePool.DynamicSchemaSpec), which
// toMachineTemplate reads with json.Unmarshal. Only the names of resourceFields count; a spec without them keeps
// no field, as in Rancher.
func ParseSchema(spec string) (Schema, error) {
	var s struct {
		ResourceFields map[string]json.RawMessage `json:"resourceFields"`
	}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return nil, errors.New("not the JSON of a DynamicSchemaSpec (an object with resourceFields)")
	}
	out := Schema{}
	for name := range s.ResourceFields {
		out[name] = true
	}
	return out, nil
}

// Prune is pruneBySchema (pkg/controllers/provisioningv2/provisioningcluster/template.go, the same in v2.12.12,
// v2.13.8, v2.14.4 and v2.15.0), which toMachineTemplate applies to the pool's machine config before anything
// else reads it: every key that is not a field of the pool's schema goes — metadata, kind and apiVersion, and
// the fields a newer driver added after the pool was made (rancher/rancher#40730). It returns what stays, the
// spec of the pool's machine template and of its machines, and the keys dropped, sorted.
func Prune(config map[string]any, schema Schema) (kept map[string]any, dropped []string) {
	kept = map[string]any{}
	for k, v := range config {
		if schema[k] {
			kept[k] = v
		} else {
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)
	return kept, dropped
}

// PruneBySchema is Prune with the schema given as the pool's fields.
func PruneBySchema(config map[string]any, poolFields []Field) map[string]any {
	schema := Schema{}
	for _, f := range poolFields {
		schema[f.Name] = true
	}
	kept, _ := Prune(config, schema)
	return kept
}

// Pool is what a provisioning cluster says of one machine pool that check --cluster needs (cluster_types.go,
// RKEMachinePool): its name, the machine config it points at (machineConfigRef), its quantity and its copy of
// the driver's schema, and what its nodes are (Nodes: roles, labels, taints, autoscaling).
type Pool struct {
	Name       string
	ConfigKind string
	ConfigName string
	// Quantity is the pool's machine count; nil when the cluster does not say.
	Quantity *int64
	// Schema is nil while the pool has no dynamicSchemaSpec: Rancher makes no machine template until its cluster
	// controller has copied the driver's schema into it (toMachineTemplate returns generic.ErrSkip).
	Schema Schema
	Nodes  PoolNodes
}

// Cluster is a provisioning cluster's name, its machine pools, and what every machine of it runs (Runs).
type Cluster struct {
	Name  string
	Pools []Pool
	Runs  ClusterRuns
}

// clusterObject is the part of a provisioning cluster (kubectl get clusters.provisioning.cattle.io NAME -o json)
// that Cluster holds.
type clusterObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		KubernetesVersion string `json:"kubernetesVersion"`
		RKEConfig         *struct {
			MachinePools []struct {
				Name             string `json:"name"`
				Quantity         *int64 `json:"quantity"`
				MachineConfigRef *struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"machineConfigRef"`
				DynamicSchemaSpec string `json:"dynamicSchemaSpec"`
				poolNodesObject
			} `json:"machinePools"`
			clusterRunsObject
		} `json:"rkeConfig"`
	} `json:"spec"`
}

// ParseCluster reads a provisioning cluster from its JSON. Errors name the pool and the field, never a value.
func ParseCluster(data []byte) (Cluster, error) {
	var obj clusterObject
	if err := json.Unmarshal(data, &obj); err != nil {
		return Cluster{}, errors.New("not a provisioning cluster: " + typeError(err))
	}
	if obj.APIVersion != ClusterGroupVersion || obj.Kind != "Cluster" {
		return Cluster{}, fmt.Errorf("the object must be apiVersion %s, kind Cluster (kubectl get clusters.provisioning.cattle.io -n fleet-default NAME -o yaml); it is apiVersion %q, kind %q",
			ClusterGroupVersion, obj.APIVersion, obj.Kind)
	}
	c := Cluster{Name: obj.Metadata.Name, Runs: ClusterRuns{K3s: isK3s(obj.Spec.KubernetesVersion), CloudProviderKnown: true}}
	if obj.Spec.RKEConfig == nil {
		return c, nil
	}
	c.Runs.CloudProvider, c.Runs.CloudProviderKnown = obj.Spec.RKEConfig.cloudProvider()
	for i, p := range obj.Spec.RKEConfig.MachinePools {
		pool := Pool{Name: p.Name, Quantity: p.Quantity, Nodes: p.nodes()}
		if p.MachineConfigRef != nil {
			pool.ConfigKind, pool.ConfigName = p.MachineConfigRef.Kind, p.MachineConfigRef.Name
		}
		if p.DynamicSchemaSpec != "" {
			s, err := ParseSchema(p.DynamicSchemaSpec)
			if err != nil {
				return Cluster{}, fmt.Errorf("spec.rkeConfig.machinePools[%d] (pool %q): dynamicSchemaSpec is %v", i, p.Name, err)
			}
			pool.Schema = s
		}
		c.Pools = append(c.Pools, pool)
	}
	return c, nil
}

// typeError is a JSON decoding error without the value it quotes: the field and the type expected.
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "an object"
		switch te.Type.Kind() {
		case reflect.Int64:
			want = "a whole number"
		case reflect.String:
			want = "a string"
		case reflect.Slice:
			want = "a list"
		}
		return te.Field + " must be " + want
	}
	return "not a JSON object"
}

// PoolFor is the pool of c that uses the machine config of kind and name (its machineConfigRef); with pool
// given, that pool, which must use it. A config used by no pool, or by several without pool, is an error that
// lists the cluster's pools.
func (c Cluster) PoolFor(kind, name, pool string) (Pool, error) {
	var found []Pool
	for _, p := range c.Pools {
		if pool != "" && p.Name == pool {
			if p.ConfigKind != kind || p.ConfigName != name {
				return Pool{}, fmt.Errorf("pool %s of cluster %s uses %s %s, not %s %s", p.Name, c.Name, p.ConfigKind, p.ConfigName, kind, name)
			}
			return p, nil
		}
		if pool == "" && p.ConfigKind == kind && p.ConfigName == name {
			found = append(found, p)
		}
	}
	switch {
	case pool != "":
		return Pool{}, fmt.Errorf("cluster %s has no pool %s; %s", c.Name, pool, c.poolsNamed())
	case len(found) == 0:
		return Pool{}, fmt.Errorf("no pool of cluster %s uses %s %s; %s", c.Name, kind, name, c.poolsNamed())
	case len(found) > 1:
		return Pool{}, fmt.Errorf("pools %s and %s of cluster %s both use %s %s: name one with --pool", found[0].Name, found[1].Name, c.Name, kind, name)
	}
	return found[0], nil
}

// namedPools is how many of a cluster's pools a message names; the others are counted.
const namedPools = 5

// poolsNamed names the cluster's first pools, each with the machine config it uses, and counts the rest: a
// cluster may have thousands, and the message is one line ("its pools: a (…), b (…) and 9998 more, 10000 in all").
func (c Cluster) poolsNamed() string {
	if len(c.Pools) == 0 {
		return "it has no pools"
	}
	var named []string
	for _, p := range c.Pools[:min(len(c.Pools), namedPools)] {
		if p.ConfigKind == "" && p.ConfigName == "" {
			named = append(named, p.Name)
		} else {
			named = append(named, fmt.Sprintf("%s (%s %s)", p.Name, p.ConfigKind, p.ConfigName))
		}
	}
	if more := len(c.Pools) - len(named); more > 0 {
		return fmt.Sprintf("its pools: %s and %d more, %d in all", strings.Join(named, ", "), more, len(c.Pools))
	}
	return "its pools: " + strings.Join(named, ", ")
}
