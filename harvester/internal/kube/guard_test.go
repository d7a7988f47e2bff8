package kube

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kubevirtv1client "kubevirt.io/client-go/kubevirt/typed/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// Objects with a hostile quantity anywhere a Go type holds one — in a map, a slice, an embedded struct — are
// refused by FromUnstructured, naming the object and the field; the same strings where no quantity is read pass.
func TestFromUnstructuredBoundsQuantities(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  map[string]any
		err  string // "" for no error
		conv func(*unstructured.Unstructured) error
	}{
		{"quota hard", map[string]any{"metadata": map[string]any{"name": "q1", "namespace": "team"},
			"status": map[string]any{"hard": map[string]any{"limits.memory": "1e-1000000000"}}},
			`ResourceQuota team/q1: status.hard[limits.memory] "1e-1000000000" has a decimal exponent beyond ±99`, convert[corev1.ResourceQuota]},
		{"node allocatable", map[string]any{"metadata": map[string]any{"name": "n1"},
			"status": map[string]any{"allocatable": map[string]any{"nvidia.com/gpu": "1e1000000000"}}},
			`Node n1: status.allocatable[nvidia.com/gpu] "1e1000000000"`, convert[corev1.Node]},
		{"a pod's second container", map[string]any{"metadata": map[string]any{"name": "p", "namespace": "ns"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}, map[string]any{"name": "b",
				"resources": map[string]any{"limits": map[string]any{"memory": "1" + strings.Repeat("0", 100)}}}}}},
			`Pod ns/p: spec.containers[1].resources.limits[memory]`, convert[corev1.Pod]},
		{"a VMI's guest memory", map[string]any{"metadata": map[string]any{"name": "vm1", "namespace": "ns"},
			"spec": map[string]any{"domain": map[string]any{"memory": map[string]any{"guest": "2e-300"}, "devices": map[string]any{}}}},
			`VirtualMachineInstance ns/vm1: spec.domain.memory.guest "2e-300"`, convert[kubevirtv1.VirtualMachineInstance]},
		{"the same strings where no quantity is read", map[string]any{"metadata": map[string]any{"name": "s",
			"annotations": map[string]any{"a": "1e1000000000"}}, "stringData": map[string]any{"memory": "1e-1000000000"}},
			"", convert[corev1.Secret]},
		{"amounts Kubernetes writes", map[string]any{"metadata": map[string]any{"name": "q2"},
			"status": map[string]any{"hard": map[string]any{"limits.memory": "9223372036854775807", "pods": 10, "requests.cpu": "500m"}}},
			"", convert[corev1.ResourceQuota]},
	} {
		err := tc.conv(&unstructured.Unstructured{Object: tc.obj})
		var qe *quantity.Error
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &qe)):
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.err)
		}
	}
}

func convert[T any](u *unstructured.Unstructured) error {
	_, err := FromUnstructured[T](u)
	return err
}

// The refusal comes before the parse: converting a quota whose amount would cost resource.ParseQuantity some
// 40 MB (1e-10000000) allocates no more than converting an ordinary one.
func TestFromUnstructuredRefusesBeforeParsing(t *testing.T) {
	quota := func(amount string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "q"},
			"status": map[string]any{"hard": map[string]any{"limits.memory": amount}}}}
	}
	alloc := func(u *unstructured.Unstructured) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _ = FromUnstructured[corev1.ResourceQuota](u)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	ordinary, hostile := alloc(quota("10Gi")), alloc(quota("1e-10000000"))
	if hostile > ordinary+64<<10 {
		t.Errorf("converting the hostile quota allocated %d KB, an ordinary one %d KB", hostile>>10, ordinary>>10)
	}
}

// KubeVirt's client decodes VMs and VMIs as it reads them: its decoder holds them to quantity.Form first, in a
// get, a list and a watch's events, and decodes ordinary ones as KubeVirt's own client does.
func TestKubevirtClientBoundsQuantities(t *testing.T) {
	vm := func(name, memory string) string {
		return fmt.Sprintf(`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":%q,"namespace":"ns"},
			"spec":{"template":{"spec":{"domain":{"devices":{},"resources":{"limits":{"memory":%q}}}}}}}`, name, memory)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") == "true":
			fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", vm("vm2", "1e1000000000"))
		case strings.HasSuffix(r.URL.Path, "/virtualmachines/vm1"):
			fmt.Fprint(w, vm("vm1", "4Gi"))
		case strings.HasSuffix(r.URL.Path, "/virtualmachines/vm2"):
			fmt.Fprint(w, vm("vm2", "1e-1000000000"))
		case strings.HasSuffix(r.URL.Path, "/virtualmachines/vm3"): // the e escaped, as JSON allows
			fmt.Fprint(w, strings.Replace(vm("vm3", "1E-1000000000"), "1E-", `1\u0045-`, 1))
		case strings.HasSuffix(r.URL.Path, "/virtualmachines/vm4"): // KubeVirt reads a VMI spec's names in any case
			fmt.Fprint(w, strings.Replace(vm("vm4", "1e-1000"), `"resources"`, `"Resources"`, 1))
		case strings.HasSuffix(r.URL.Path, "/virtualmachines/vm5"): // a number: Quantity.UnmarshalJSON parses its text
			fmt.Fprint(w, strings.Replace(vm("vm5", "1e-1000"), `"1e-1000"`, `1e-1000`, 1))
		case strings.HasSuffix(r.URL.Path, "/virtualmachines"):
			fmt.Fprintf(w, `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineList","metadata":{},"items":[%s,%s]}`, vm("vm1", "4Gi"), vm("vm2", "0e500"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	kv, err := newKubevirtClient(&rest.Config{Host: srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	vms := kv.VirtualMachines("ns")

	got, err := vms.Get(ctx, "vm1", metav1.GetOptions{})
	upstream, _ := kubevirtv1client.NewForConfigAndClient(&rest.Config{Host: srv.URL}, srv.Client())
	want, wantErr := upstream.VirtualMachines("ns").Get(ctx, "vm1", metav1.GetOptions{})
	if err != nil || wantErr != nil || !reflect.DeepEqual(got, want) || got.Spec.Template.Spec.Domain.Resources.Limits.Memory().String() != "4Gi" {
		t.Errorf("an ordinary VM: %+v, %v; KubeVirt's own client: %+v, %v", got, err, want, wantErr)
	}
	var qe *quantity.Error
	_, err = vms.Get(ctx, "vm2", metav1.GetOptions{})
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), `VirtualMachine ns/vm2: spec.template.spec.domain.resources.limits[memory] "1e-1000000000" has a decimal exponent beyond ±99`) {
		t.Errorf("get: %v", err)
	}
	_, err = vms.Get(ctx, "vm3", metav1.GetOptions{})
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), `VirtualMachine ns/vm3: spec.template.spec.domain.resources.limits[memory] "1E-1000000000"`) {
		t.Errorf("get, the exponent escaped: %v", err)
	}
	_, err = vms.Get(ctx, "vm4", metav1.GetOptions{})
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), `VirtualMachine ns/vm4: spec.template.spec.domain.Resources.limits[memory] "1e-1000"`) {
		t.Errorf("get, a field in another case: %v", err)
	}
	_, err = vms.Get(ctx, "vm5", metav1.GetOptions{})
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), `VirtualMachine ns/vm5: spec.template.spec.domain.resources.limits[memory] "1e-1000"`) {
		t.Errorf("get, a quantity as a JSON number: %v", err)
	}
	_, err = vms.List(ctx, metav1.ListOptions{})
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), `VirtualMachineList: items[1].spec.template.spec.domain.resources.limits[memory] "0e500"`) {
		t.Errorf("list: %v", err)
	}
	w, err := vms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if status, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok ||
		!strings.Contains(status.Message, `VirtualMachine ns/vm2: spec.template.spec.domain.resources.limits[memory] \"1e1000000000\" has a decimal exponent beyond ±99`) {
		t.Errorf("watch event: %s %+v", ev.Type, ev.Object)
	}
}

// The decoder walks an object only when its bytes may hold a quantity quantity.Form refuses: every such string, as
// JSON writes it or with its characters escaped (\u0065 for e), is caught by the scan; ordinary objects are not.
func TestPrescanCatchesEveryRefusedQuantity(t *testing.T) {
	escaped := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	}
	check := func(s string) {
		if quantity.Form(s) == nil {
			return
		}
		forms := []string{fmt.Sprintf("%q", s)}
		if len(s) < 1<<12 {
			forms = append(forms, `"`+escaped(s)+`"`)
		}
		for _, form := range forms {
			if data := []byte(`{"memory":` + form + `}`); !mayHoldCostlyQuantity(data) {
				t.Errorf("the scan missed %.60s", data)
			}
		}
	}
	for s := range hostile.Quantities {
		check(s)
	}
	// Strings of a quantity's shape — sign, digits, point, digits, e or E, sign, digits — with runs of every length
	// to 70, drawn at random; quantity.Form refuses a good part of them.
	rng := rand.New(rand.NewPCG(1, 2))
	digits := func() string { return strings.Repeat("7", rng.IntN(71)) }
	pick := func(options ...string) string { return options[rng.IntN(len(options))] }
	refused := 0
	for range 5000 {
		s := pick("", "-", "+", " ") + digits() + pick("", ".") + digits() + pick("e", "E", "Ei", "") + pick("", "+", "-") + pick("", "0", "00") + digits()
		if quantity.Form(s) != nil {
			refused++
		}
		check(s)
	}
	if refused < 1000 {
		t.Errorf("only %d of the random strings are refused: the test checks little", refused)
	}
	for _, ok := range []string{`{"memory":"4Gi","cpu":"200m","x":"1e99","y":"0.5","z":"\u003c\u0026"}`, `{"n":12345678901234567890}`} {
		if mayHoldCostlyQuantity([]byte(ok)) {
			t.Errorf("an ordinary object flagged: %s", ok)
		}
	}
}
