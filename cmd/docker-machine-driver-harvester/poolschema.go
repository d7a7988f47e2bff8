package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// checkPoolSchema is the name of check's line for what Rancher drops from the machine config.
const checkPoolSchema = "pool schema"

// poolSource is what check --cluster reads: the provisioning cluster (kubectl get clusters.provisioning.cattle.io
// -n fleet-default NAME -o yaml), or one pool's dynamicSchemaSpec alone (the JSON string kubectl prints with -o
// jsonpath='{.spec.rkeConfig.machinePools[0].dynamicSchemaSpec}'); pool is --pool.
type poolSource struct {
	cluster *rancher.Cluster
	schema  rancher.Schema
	pool    string
}

// parsePoolSource reads --cluster's file, one YAML or JSON document as --machine-config's: an object with
// apiVersion or kind is a cluster, one with resourceFields a pool's schema. --pool names a pool of a cluster.
func parsePoolSource(data []byte, pool string) (*poolSource, error) {
	// sigs.k8s.io/yaml reads the first document alone: a second one would be ignored without a word.
	if err := config.OneDocument(data); err != nil {
		return nil, errors.New("--cluster: " + err.Error())
	}
	raw, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		// A provisioning cluster may hold secrets (an agent's proxy URL, say): the parser's message is told only
		// in a form that quotes nothing of it, as a machine config's (decodeMachineConfig).
		return nil, errors.New("--cluster: not a YAML or JSON object: " + config.ParseErrorText(err))
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(raw, &head); err != nil || head == nil {
		return nil, errors.New("--cluster: not a YAML or JSON object; give the output of kubectl get clusters.provisioning.cattle.io -n fleet-default NAME -o yaml")
	}
	_, hasKind := head["kind"]
	_, hasVersion := head["apiVersion"]
	_, hasFields := head["resourceFields"]
	switch {
	case hasKind || hasVersion:
		c, err := rancher.ParseCluster(raw)
		if err != nil {
			return nil, errors.New("--cluster: " + err.Error())
		}
		return &poolSource{cluster: &c, pool: pool}, nil
	case !hasFields:
		return nil, errors.New("--cluster: neither a provisioning cluster (apiVersion " + rancher.ClusterGroupVersion +
			", kind Cluster) nor a pool's dynamicSchemaSpec (an object with resourceFields)")
	case pool != "":
		return nil, errors.New("--pool names a pool of a cluster; --cluster holds one pool's dynamicSchemaSpec")
	}
	s, err := rancher.ParseSchema(string(raw))
	if err != nil {
		return nil, errors.New("--cluster: " + err.Error())
	}
	return &poolSource{schema: s}, nil
}

// poolOf is the pool of the machine config of kind and name: its name ("" for a schema alone), its copy of the
// schema, its quantity (0 when unknown) and its cluster's name ("" when unknown).
func (s *poolSource) poolOf(kind, name string) (pool rancher.Pool, cluster string, err error) {
	if s.cluster == nil {
		return rancher.Pool{Schema: s.schema}, "", nil
	}
	if name == "" {
		return rancher.Pool{}, "", errors.New("--machine-config: the machine config has no metadata.name to find its pool by; name the pool with --pool")
	}
	pool, err = s.cluster.PoolFor(kind, name, s.pool)
	if err != nil {
		return rancher.Pool{}, "", errors.New("--cluster: " + err.Error())
	}
	return pool, s.cluster.Name, nil
}

// pruneForPool drops from the machine config obj what Rancher drops for pool (rancher.Prune, as toMachineTemplate
// does before it builds the command line) and returns what stays and the check line that says so: a problem for
// each dropped field whose value would have reached the command line (the machines will not get what the config
// asks for), a skipped line naming the dropped fields that hold nothing, ok when nothing is dropped. Metadata,
// kind and apiVersion go too, as for every pool, and are not named. Values are never quoted.
func pruneForPool(obj map[string]any, pool rancher.Pool, id identity.Identity) (map[string]any, preflight.Check) {
	c := preflight.Check{Name: checkPoolSchema}
	which := "the pool's schema"
	if pool.Name != "" {
		which = "pool " + pool.Name + "'s schema"
	}
	if pool.Schema == nil {
		c.Skipped = "pool " + pool.Name + " has no copy of the driver's schema yet (dynamicSchemaSpec): Rancher copies the current one before it makes the pool's machines, so it drops nothing"
		return obj, c
	}
	kept, dropped := rancher.Prune(obj, pool.Schema)
	var empty []string
	for _, k := range dropped {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		if !rancher.Passes(obj[k]) {
			empty = append(empty, k)
			continue
		}
		c.Problems = append(c.Problems, config.Problem{Message: fmt.Sprintf(
			"field %s is set, but %s (dynamicSchemaSpec, copied when the pool was made) has no such field: Rancher drops it and passes no %s; let the pool adopt the driver's current schema (docs/options.md: Existing pools) or clear the field",
			k, which, rancher.Since213.Flag(id.Name(), k))})
	}
	switch {
	case len(empty) > 0:
		c.Skipped = fmt.Sprintf("fields Rancher drops, not in %s, each holding nothing (\"\", false or null): %s", which, strings.Join(empty, ", "))
	case len(c.Problems) == 0:
		c.Detail = "every field of the machine config is in " + which
	}
	return kept, c
}
