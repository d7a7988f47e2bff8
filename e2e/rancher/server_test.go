package rancher_test

import (
	"context"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/mcnflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
	"github.com/harvester/docker-machine-driver-harvester/e2e/crds"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/kubeconfig"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// namespace is where Rancher keeps machine configs.
const namespace = "fleet-default"

var configs = schema.GroupVersionResource{Group: rancher.ConfigGroup, Version: "v1", Resource: rancher.ConfigResource("harvester")}

// server is the control plane the package's tests share, with namespace fleet-default. Each test installs the
// HarvesterConfig CRD it needs, so tests run one at a time.
type server struct {
	cfg *rest.Config
	dyn dynamic.ResourceInterface
}

var shared struct {
	once sync.Once
	cp   *controlplane.ControlPlane
	srv  *server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cp != nil {
		shared.cp.Stop()
	}
	os.Exit(code)
}

// start returns the shared server, starting it on first use. Without the control-plane binaries the test is
// skipped, or fails under DMDH_REQUIRE_TOOLS=1 (make test).
func start(t *testing.T) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real control plane (skipped with -short)")
	}
	if _, err := repo.ToolDir(context.Background(), "controlplane", controlplane.BinEnv); err != nil {
		testenv.Unavailable(t, "control-plane binaries", err)
	}
	shared.once.Do(func() {
		shared.srv, shared.err = startServer(t)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	t.Cleanup(func() {
		if t.Failed() && shared.cp != nil {
			t.Log(shared.cp.Logs(40))
		}
	})
	return shared.srv
}

func startServer(t *testing.T) (*server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Logf: t.Logf})
	if err != nil {
		return nil, err
	}
	shared.cp = cp
	cfg, err := kubeconfig.RESTConfig(cp.AdminKubeconfig())
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &server{cfg: cfg, dyn: dyn.Resource(configs).Namespace(namespace)}, nil
}

// install applies the HarvesterConfig CRD Rancher makes of fields and waits until the API server judges
// HarvesterConfigs by it: until a dry-run create of an empty HarvesterConfig comes back holding exactly the
// fields' defaults.
func (s *server) install(t *testing.T, fields []rancher.Field) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, s.cfg, []*unstructured.Unstructured{rancher.ConfigCRD("harvester", fields)}); err != nil {
		t.Fatal(err)
	}
	want := rancher.Defaults(fields)
	var got map[string]any
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		out, err := s.dyn.Create(ctx, harvesterConfig("schema-probe", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if lastErr = err; err != nil {
			return false, nil // the new schema's storage may not serve yet
		}
		got = content(out)
		return reflect.DeepEqual(got, want), nil
	})
	if err != nil {
		t.Fatalf("the API server never judged HarvesterConfigs by the new CRD (last error: %v): an empty one comes back as\n%v\nwant\n%v", lastErr, got, want)
	}
}

// harvesterConfig is a HarvesterConfig in fleet-default holding fields.
func harvesterConfig(name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(rancher.ConfigGroup + "/v1")
	u.SetKind(rancher.ConfigKind("harvester"))
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// content is a HarvesterConfig's fields: the object without apiVersion, kind and metadata.
func content(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind", "metadata":
		default:
			out[k] = v
		}
	}
	return out
}

// fieldsOf is Rancher's fields of flags.
func fieldsOf(t *testing.T, flags []mcnflag.Flag) []rancher.Field {
	t.Helper()
	fields, err := rancher.FieldsOf(flags)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}
