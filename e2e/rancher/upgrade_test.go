package rancher_test

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/mcnflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// v106Pool is a HarvesterConfig as Rancher's Harvester form makes it for a pool under v1.0.6: only v1.0.6's
// fields, ints as strings.
var v106Pool = map[string]any{
	"cpuCount": "4", "memorySize": "8", "diskSize": "40", "diskBus": "virtio", "imageName": "default/image-jammy",
	"networkName": "default/vlan1", "networkModel": "virtio", "sshUser": "ubuntu", "vmNamespace": "default",
	"userData": "#cloud-config\npackage_update: true\n", "enableEfi": true, "reservedMemorySize": "256",
	"clusterType": "imported",
}

// storeUnderV106 installs v1.0.6's HarvesterConfig CRD and stores v106Pool under name, as Rancher stored it
// before the upgrade (the CRD's defaults fill in the other v1.0.6 fields); it returns the stored object.
func storeUnderV106(t *testing.T, s *server, name string) (stored *unstructured.Unstructured, old []rancher.Field) {
	t.Helper()
	old = fieldsOf(t, v106Flags())
	s.install(t, old)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stored, err := s.dyn.Create(ctx, harvesterConfig(name, v106Pool), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range content(stored) {
		if !hasField(old, k) {
			t.Fatalf("stored field %s is not one of v1.0.6's", k)
		}
	}
	return stored, old
}

func (s *server) get(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := s.dyn.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// After Rancher reads this driver's flags (a new Rancher image, or a schema refresh), its HarvesterConfig CRD
// changes; a pool stored under v1.0.6's CRD must keep its command line, whether the pool keeps its copy of the
// old schema (dynamicSchemaSpec, Rancher's default since rancher/rancher#40730) or adopts the new one (the
// provisioning.cattle.io/allow-dynamic-schema-drop route).
//
// Rancher's code gives every flag a CRD default (nodedriver/utils.go FlagToField, dynamicschema.go
// getConfigSchemas: "" for a string flag, false for a bool), so the stored HarvesterConfig does read back with
// each new field; the test shows that they all read back empty or false, which toArgs leaves off the command
// line, and which fields the machine template's hash then sees.
func TestUpgradeKeepsEveryPoolsCommandLine(t *testing.T) {
	s := start(t)
	stored, old := storeUnderV106(t, s, "nc-c1-pool1-upgrade")
	current := fieldsOf(t, config.CreateFlags())
	s.install(t, current)
	after := s.get(t, stored.GetName())

	if after.GetResourceVersion() != stored.GetResourceVersion() {
		t.Errorf("resourceVersion %s → %s: the object was written", stored.GetResourceVersion(), after.GetResourceVersion())
	}
	was, now := content(stored), content(after)
	for k, v := range was {
		if !reflect.DeepEqual(now[k], v) {
			t.Errorf("field %s was %#v, reads back as %#v", k, v, now[k])
		}
	}
	var added, wantAdded, addedBools []string
	for k, v := range now {
		if _, ok := was[k]; ok {
			continue
		}
		added = append(added, k)
		switch v {
		case "":
		case false:
			addedBools = append(addedBools, k)
		default:
			t.Errorf("new field %s reads back as %#v: Rancher would pass --%s", k, v, strings.TrimPrefix(rancher.Since213.Flag("harvester", k), "--"))
		}
	}
	for _, f := range current {
		if !hasField(old, f.Name) {
			wantAdded = append(wantAdded, f.Name)
		}
	}
	sort.Strings(added)
	sort.Strings(wantAdded)
	if !reflect.DeepEqual(added, wantAdded) {
		t.Errorf("fields the new CRD adds on read: %v\nwant every field beyond v1.0.6's (Rancher defaults each): %v", added, wantAdded)
	}
	if len(wantAdded) != len(config.CreateFlags())-32 {
		t.Errorf("%d new fields, want %d", len(wantAdded), len(config.CreateFlags())-32)
	}

	oldSpec := rancher.PruneBySchema(was, old)
	for _, r := range rancher.Rules {
		want := rancher.ToArgs("harvester", oldSpec, "c1", r)
		if got := rancher.ToArgs("harvester", rancher.PruneBySchema(now, old), "c1", r); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, pool keeping v1.0.6's schema: command line\n%v\nwant v1.0.6's\n%v", r.Name, got, want)
		}
		if got := rancher.ToArgs("harvester", rancher.PruneBySchema(now, current), "c1", r); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, pool adopting the new schema: command line\n%v\nwant v1.0.6's\n%v", r.Name, got, want)
		}
		if len(want) < len(v106Pool) {
			t.Errorf("%s: v1.0.6's command line %v lacks the pool's settings", r.Name, want)
		}
	}

	// The machine template's hash: unchanged while the pool keeps its copy of the schema; a pool that adopts
	// the new one sees each new boolean field at false (PruneEmpty drops "" but keeps false), so its hash
	// changes and Rancher replaces its machines, whatever the flags declare.
	if got, want := rancher.HashedSpec(rancher.PruneBySchema(now, old)), rancher.HashedSpec(oldSpec); !reflect.DeepEqual(got, want) {
		t.Errorf("hashed spec of a pool keeping its schema changed:\n%v\nwant\n%v", got, want)
	}
	adopted := rancher.HashedSpec(rancher.PruneBySchema(now, current))
	var hashedNew []string
	for k := range adopted {
		if _, ok := was[k]; !ok {
			hashedNew = append(hashedNew, k)
		}
	}
	sort.Strings(hashedNew)
	sort.Strings(addedBools)
	if !reflect.DeepEqual(hashedNew, addedBools) || len(addedBools) == 0 {
		t.Errorf("new fields the hash of an adopting pool sees: %v, want the new booleans %v", hashedNew, addedBools)
	}
	t.Logf("new fields read back empty: %d; as false (in an adopting pool's template hash): %v", len(added)-len(addedBools), addedBools)
}

// The same upgrade with the four defaults this driver applies itself declared to Rancher instead, as they were
// before: the new CRD fills them into the stored HarvesterConfig and a pool adopting the schema gets four more
// flags. This is what TestUpgradeKeepsEveryPoolsCommandLine would catch.
func TestDeclaredDefaultsWouldReachEveryPool(t *testing.T) {
	s := start(t)
	stored, old := storeUnderV106(t, s, "nc-c1-pool1-declared")
	declared := map[string]mcnflag.Flag{
		config.FlagCreateTimeout:             &mcnflag.IntFlag{Name: config.FlagCreateTimeout, Value: config.DefaultCreateTimeoutSecs},
		config.FlagOS:                        &mcnflag.StringFlag{Name: config.FlagOS, Value: config.DefaultOS},
		config.FlagEvictionStrategy:          &mcnflag.StringFlag{Name: config.FlagEvictionStrategy, Value: config.DefaultEvictionStrategy},
		config.FlagCloudProviderDistribution: &mcnflag.StringFlag{Name: config.FlagCloudProviderDistribution, Value: config.DefaultDistribution},
	}
	flags := config.CreateFlags()
	for i, f := range flags {
		if d, ok := declared[f.String()]; ok {
			flags[i] = d
		}
	}
	withDefaults := fieldsOf(t, flags)
	s.install(t, withDefaults)
	now := content(s.get(t, stored.GetName()))

	want := append(rancher.ToArgs("harvester", rancher.PruneBySchema(content(stored), old), "c1", rancher.Since213),
		"--harvester-cloud-provider-distribution=rke2", "--harvester-create-timeout=900",
		"--harvester-eviction-strategy=LiveMigrateIfPossible", "--harvester-os=linux")
	sort.Strings(want)
	if got := rancher.ToArgs("harvester", rancher.PruneBySchema(now, withDefaults), "c1", rancher.Since213); !reflect.DeepEqual(got, want) {
		t.Errorf("command line with declared defaults\n%v\nwant\n%v", got, want)
	}
}

func hasField(fields []rancher.Field, name string) bool {
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
}
