package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kubevirtv1client "kubevirt.io/client-go/kubevirt/typed/core/v1"
)

// upstreamKubevirt is KubeVirt's generated client seen as a KubevirtInterface: the reference the driver's client
// is held to.
type upstreamKubevirt struct {
	kv kubevirtv1client.KubevirtV1Interface
}

func (u upstreamKubevirt) VirtualMachines(ns string) VirtualMachineInterface {
	return u.kv.VirtualMachines(ns)
}

func (u upstreamKubevirt) VirtualMachineInstances(ns string) VirtualMachineInstanceInterface {
	return u.kv.VirtualMachineInstances(ns)
}

// request is what the API server received.
type request struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// recordingServer answers like an API server serving KubeVirt (objects, lists, watches, Status errors for names
// starting with "missing") and records every request.
type recordingServer struct {
	mu       sync.Mutex
	requests []request
}

func (s *recordingServer) take() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // apis/<group>/v1[/namespaces/<ns>]/<resource>[/<name>[/<sub>]]
	ns := ""
	if len(parts) > 4 && parts[3] == "namespaces" {
		ns, parts = parts[4], append(parts[:3:3], parts[5:]...)
	}
	resource, name := parts[3], ""
	if len(parts) > 4 {
		name = parts[4]
	}
	kind := map[string]string{"virtualmachines": "VirtualMachine", "virtualmachineinstances": "VirtualMachineInstance"}[resource]
	object := func(name, rv string) string {
		return fmt.Sprintf(`{"apiVersion":"kubevirt.io/v1","kind":%q,"metadata":{"name":%q,"namespace":%q,"uid":"uid-%s","resourceVersion":%q},`+
			`"spec":{"runStrategy":"Always","template":{"spec":{"domain":{"devices":{},"resources":{"requests":{"memory":"2Gi"}}}}}},"status":{"printableStatus":"Running"}}`,
			kind, name, ns, name, rv)
	}
	switch {
	case strings.HasPrefix(name, "missing"):
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s.kubevirt.io %q not found","reason":"NotFound","details":{"name":%q,"group":"kubevirt.io","kind":%q},"code":404}`,
			resource, name, name, resource)
	case r.URL.Query().Get("watch") == "true":
		for _, ev := range []string{
			`{"type":"ADDED","object":` + object("vm1", "11") + `}`,
			`{"type":"MODIFIED","object":` + object("vm1", "12") + `}`,
			`{"type":"BOOKMARK","object":{"apiVersion":"kubevirt.io/v1","kind":"` + kind + `","metadata":{"resourceVersion":"13"}}}`,
			`{"type":"DELETED","object":` + object("vm1", "14") + `}`,
			`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (14)","reason":"Expired","code":410}}`,
		} {
			fmt.Fprintln(w, ev)
			w.(http.Flusher).Flush()
		}
	case r.Method == http.MethodGet && name == "":
		fmt.Fprintf(w, `{"apiVersion":"kubevirt.io/v1","kind":"%sList","metadata":{"resourceVersion":"10"},"items":[%s,%s]}`, kind, object("vm1", "8"), object("vm2", "9"))
	case r.Method == http.MethodPost, r.Method == http.MethodPut && parts[1] == "kubevirt.io":
		w.WriteHeader(map[string]int{http.MethodPost: http.StatusCreated, http.MethodPut: http.StatusOK}[r.Method])
		_, _ = w.Write(body)
	case r.Method == http.MethodPut: // a subresource of subresources.kubevirt.io
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodDelete:
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":%q,"group":"kubevirt.io","kind":%q,"uid":"uid-%s"}}`, name, resource, name)
	default:
		fmt.Fprint(w, object(name, "20"))
	}
}

// The driver's client of VMs and VMIs sends, for each method and each kind of option the driver passes, the very
// requests KubeVirt's generated client sends — one per call, the same method, path, query, headers (JSON accepted
// and sent) and body — and hands back the same objects, watch events and errors.
func TestKubevirtClientSendsKubevirtsRequests(t *testing.T) {
	srv := &recordingServer{}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	// The driver's configuration names it as the user agent (harvester/connection); both clients get it.
	cfg := &rest.Config{Host: ts.URL, UserAgent: "docker-machine-driver-harvester/test"}
	ours, err := NewForConfig(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := kubevirtv1client.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	theirs := upstreamKubevirt{kv}

	vm := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns", UID: "uid-vm1", ResourceVersion: "7",
		Labels: map[string]string{"harvesterhci.io/creator": "docker-machine-driver-harvester"}},
		Spec: kubevirtv1.VirtualMachineSpec{RunStrategy: ptr.To(kubevirtv1.RunStrategyAlways)}}
	uid := types.UID("uid-vm1")
	mergePatch := []byte(`{"metadata":{"uid":"uid-vm1"},"spec":{"running":null,"runStrategy":"Halted"}}`)
	byName := metav1.ListOptions{FieldSelector: "metadata.name=vm1", ResourceVersion: "10", TimeoutSeconds: ptr.To(int64(317)), AllowWatchBookmarks: true}

	for _, tc := range []struct {
		name        string
		contentType string // of the request's body; "" for none
		call        func(context.Context, KubevirtInterface) (any, error)
	}{
		{"VM get", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Get(ctx, "vm1", metav1.GetOptions{})
		}},
		{"VM get from the cache", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Get(ctx, "vm1", metav1.GetOptions{ResourceVersion: FromCache})
		}},
		{"VM get, not found", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Get(ctx, "missing", metav1.GetOptions{})
		}},
		{"VM create", "application/json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Create(ctx, vm.DeepCopy(), metav1.CreateOptions{})
		}},
		{"VM create, dry run", "application/json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Create(ctx, vm.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "docker-machine-driver-harvester"})
		}},
		{"VM update", "application/json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Update(ctx, vm.DeepCopy(), metav1.UpdateOptions{})
		}},
		{"VM delete, foreground, with a UID precondition", "application/json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return nil, c.VirtualMachines("ns").Delete(ctx, "vm1", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
				Preconditions: &metav1.Preconditions{UID: &uid}})
		}},
		{"VM delete, not found", "application/json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return nil, c.VirtualMachines("ns").Delete(ctx, "missing", metav1.DeleteOptions{})
		}},
		{"VM list", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").List(ctx, metav1.ListOptions{})
		}},
		{"VM list by selectors, from a version, paged, with a timeout", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").List(ctx, metav1.ListOptions{LabelSelector: "harvesterhci.io/creator=docker-machine-driver-harvester,a in (b,c)",
				FieldSelector: "metadata.name=vm1", ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
				Limit: 500, Continue: "token", TimeoutSeconds: ptr.To(int64(30))})
		}},
		{"VM list in all namespaces", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("").List(ctx, metav1.ListOptions{LabelSelector: "x=y"})
		}},
		{"VM watch by name from a version", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return watched(c.VirtualMachines("ns").Watch(ctx, byName))
		}},
		{"VM watch in all namespaces", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return watched(c.VirtualMachines("").Watch(ctx, metav1.ListOptions{}))
		}},
		{"VM merge patch", "application/merge-patch+json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Patch(ctx, "vm1", types.MergePatchType, mergePatch, metav1.PatchOptions{})
		}},
		{"VM JSON patch of a subresource, dry run", "application/json-patch+json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Patch(ctx, "vm1", types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/running"}]`),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "m"}, "status")
		}},
		{"VM patch, not found", "application/merge-patch+json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachines("ns").Patch(ctx, "missing", types.MergePatchType, mergePatch, metav1.PatchOptions{})
		}},
		{"VM stop with no grace", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return nil, c.VirtualMachines("ns").Stop(ctx, "vm1", &kubevirtv1.StopOptions{GracePeriod: ptr.To(int64(0))})
		}},
		{"VM stop, not found", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return nil, c.VirtualMachines("ns").Stop(ctx, "missing", &kubevirtv1.StopOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		{"VMI get", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachineInstances("ns").Get(ctx, "vm1", metav1.GetOptions{})
		}},
		{"VMI get, not found", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachineInstances("ns").Get(ctx, "missing", metav1.GetOptions{})
		}},
		{"VMI list in all namespaces from the cache", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachineInstances("").List(ctx, metav1.ListOptions{ResourceVersion: FromCache})
		}},
		{"VMI list by name", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachineInstances("ns").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=vm1", LabelSelector: "a!=b"})
		}},
		{"VMI watch by name from a version", "", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return watched(c.VirtualMachineInstances("ns").Watch(ctx, byName))
		}},
		{"VMI merge patch", "application/merge-patch+json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return c.VirtualMachineInstances("ns").Patch(ctx, "vm1", types.MergePatchType, []byte(`{"spec":{"terminationGracePeriodSeconds":0}}`), metav1.PatchOptions{})
		}},
		{"VMI delete, no grace, with a UID precondition", "application/json", func(ctx context.Context, c KubevirtInterface) (any, error) {
			return nil, c.VirtualMachineInstances("ns").Delete(ctx, "vm1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0)),
				Preconditions: &metav1.Preconditions{UID: &uid}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv.take()
			want, wantErr := tc.call(ctx, theirs)
			sentByKubevirt := srv.take()
			got, err := tc.call(ctx, ours)
			sent := srv.take()

			if len(sentByKubevirt) != 1 {
				t.Fatalf("KubeVirt's client sent %d requests; the test expects one", len(sentByKubevirt))
			}
			if !reflect.DeepEqual(sent, sentByKubevirt) {
				t.Errorf("requests sent:\n%s\nKubeVirt's client sends:\n%s", show(sent), show(sentByKubevirt))
			}
			r := sentByKubevirt[0]
			if accept := r.Header.Get("Accept"); accept != "application/json, */*" {
				t.Errorf("Accept: %q, want JSON", accept)
			}
			if ct := r.Header.Get("Content-Type"); ct != tc.contentType {
				t.Errorf("Content-Type: %q, want %q", ct, tc.contentType)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("result: %#v\nKubeVirt's client's: %#v", got, want)
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || apierrors.ReasonForError(err) != apierrors.ReasonForError(wantErr) {
				t.Errorf("error: %v (%s)\nKubeVirt's client's: %v (%s)", err, apierrors.ReasonForError(err), wantErr, apierrors.ReasonForError(wantErr))
			}
			if strings.HasPrefix(tc.name, "VM get") && !strings.Contains(tc.name, "not found") {
				if vm, _ := got.(*kubevirtv1.VirtualMachine); vm == nil || vm.Name != "vm1" || vm.Spec.Template.Spec.Domain.Resources.Requests.Memory().String() != "2Gi" {
					t.Errorf("the VM read: %+v", got)
				}
			}
		})
	}
}

// watched reads a watch to its end: the events' types and objects.
func watched(w watch.Interface, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var events []watch.Event
	for ev := range w.ResultChan() {
		events = append(events, ev)
	}
	if len(events) != 5 {
		return events, fmt.Errorf("%d events, want the 5 the server sent", len(events))
	}
	return events, nil
}

func show(rs []request) string {
	var b strings.Builder
	for _, r := range rs {
		h, _ := json.Marshal(r.Header)
		fmt.Fprintf(&b, "  %s %s?%s\n    headers %s\n    body %s\n", r.Method, r.Path, r.Query, h, r.Body)
	}
	return b.String()
}

// The plugin links neither KubeVirt's generated client nor what it drags in (see kubevirt.go): a VM or VMI call
// that needs more than this package's client grows the client here, not the plugin by megabytes.
func TestPluginLinksNoGeneratedKubevirtClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/harvester/docker-machine-driver-harvester/cmd/docker-machine-driver-harvester").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, dropped := range []string{"kubevirt.io/client-go/", "k8s.io/client-go/gentype", "k8s.io/client-go/testing", "github.com/google/gnostic-models/",
			"google.golang.org/protobuf/", "k8s.io/kube-openapi/pkg/validation/", "sigs.k8s.io/structured-merge-diff/v6/typed"} {
			if strings.HasPrefix(dep, dropped) {
				t.Errorf("the plugin links %s", dep)
			}
		}
	}
}
