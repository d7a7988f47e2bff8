package rancher_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

const (
	exampleStart = "<!-- harvesterconfig-example:start"
	exampleEnd   = "<!-- harvesterconfig-example:end -->"
)

// exampleGuide is the guide that holds the HarvesterConfig example, below the repository's root.
const exampleGuide = "docs/options.md"

// readmeExample is the guide's HarvesterConfig example, as YAML.
func readmeExample(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, exampleGuide))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), exampleStart)
	block, _, ok2 := strings.Cut(rest, exampleEnd)
	_, yaml, ok3 := strings.Cut(block, "```yaml\n")
	yaml, _, ok4 := strings.Cut(yaml, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatalf("%s lacks a yaml block between %q and %q", exampleGuide, exampleStart, exampleEnd)
	}
	return yaml
}

// decode reads YAML as kubectl does (k8s.io/apimachinery's YAML decoder: YAML 1.1).
func decode(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := apply.Decode([]byte(yaml))
	if err != nil || len(objs) != 1 {
		t.Fatalf("decode the example: %v (%d objects)", err, len(objs))
	}
	return objs[0]
}

// The guide's example (docs/options.md) is a HarvesterConfig the API server takes under the CRD Rancher makes of this
// driver's flags; Rancher turns it into a command line holding each option the example sets, the one the guide shows,
// and the driver accepts that command line.
func TestREADMEExample(t *testing.T) {
	s := start(t)
	current := fieldsOf(t, config.CreateFlags())
	s.install(t, current)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	example := decode(t, readmeExample(t))
	if example.GetNamespace() != namespace || example.GetKind() != "HarvesterConfig" {
		t.Fatalf("the example is a %s in %q, want a HarvesterConfig in %s", example.GetKind(), example.GetNamespace(), namespace)
	}
	stored, err := s.dyn.Create(ctx, example, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the API server refuses the guide's example: %v", err)
	}
	spec := rancher.PruneBySchema(content(stored), current)
	args := rancher.ToArgs("harvester", spec, "mycluster", rancher.Since213)
	if old := rancher.ToArgs("harvester", spec, "mycluster", rancher.Before213); !reflect.DeepEqual(old, args) {
		t.Errorf("Rancher before 2.13 gives\n%v\nsince 2.13\n%v", old, args)
	}
	for k, v := range content(example) {
		var want string
		switch v := v.(type) {
		case string:
			want = rancher.Since213.Flag("harvester", k) + "=" + v
		case bool:
			want = rancher.Since213.Flag("harvester", k)
		default:
			t.Errorf("example field %s is a %T, want a string or a boolean", k, v)
		}
		if (v == "" || v == false) != !slices.Contains(args, want) {
			t.Errorf("example field %s: %v; command line %v", k, v, args)
		}
	}
	for _, want := range []string{"--harvester-cpu-count=4", "--harvester-create-timeout=1200", "--harvester-zone=zone-a",
		"--harvester-region=no", "--harvester-cluster-name=mycluster"} {
		if !slices.Contains(args, want) {
			t.Errorf("the guide says the command line holds %s; it is %v", want, args)
		}
	}
	opts, err := config.ParseArgs(args, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := objects.ParseConfig("m1", opts)
	if err != nil {
		t.Fatalf("the driver refuses the example's command line: %v", err)
	}
	if cfg.CreateTimeout != 1200*time.Second || !reflect.DeepEqual(cfg.Regions, []string{"no"}) {
		t.Errorf("create timeout %v, regions %q; want 20m0s and [no]", cfg.CreateTimeout, cfg.Regions)
	}
	if cfg.VMPatch == nil || cfg.VMPatch.Kind != config.MergePatch {
		t.Errorf("VM patch %+v; want the example's merge patch", cfg.VMPatch)
	}
	// The disk performance options, ioThreadCount a string field as every number.
	if want := (config.DiskIO{BlockMultiQueue: true, ThreadsPolicy: "supplementalPool", PoolThreads: 4}); cfg.DiskIO != want || !cfg.EFIPersistent {
		t.Errorf("disk I/O %+v, persistent EFI %v; want %+v and true", cfg.DiskIO, cfg.EFIPersistent, want)
	}
}

// The quoting the guide asks for: unquoted, an int is a number and a YAML 1.1 word a boolean, and the API
// server refuses either in a string field.
func TestUnquotedValuesRefused(t *testing.T) {
	s := start(t)
	s.install(t, fieldsOf(t, config.CreateFlags()))
	yaml := readmeExample(t)
	for _, tc := range []struct{ quoted, bare, field string }{
		{`createTimeout: "1200"`, `createTimeout: 1200`, "createTimeout"},
		{`region: "no"`, `region: no`, "region"},
		{`cpuCount: "4"`, `cpuCount: 4`, "cpuCount"},
	} {
		if !strings.Contains(yaml, tc.quoted) {
			t.Errorf("the guide's example lacks %s", tc.quoted)
			continue
		}
		obj := decode(t, strings.Replace(yaml, tc.quoted, tc.bare, 1))
		obj.SetName("nc-mycluster-pool1-unquoted")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := s.dyn.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "string") {
			t.Errorf("%s: the API server answered %v, want a refusal naming %s and its type string", tc.bare, err, tc.field)
		}
	}
}
