package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/sirupsen/logrus"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// verdict is admit's report on one VirtualMachine.
type verdict struct {
	File    string `json:"file"`
	Name    string `json:"name"`
	Allowed bool   `json:"allowed"`
	// Mutated says that Harvester's mutator changed the VM before the validator judged it (admit -mutate), and
	// Requests are the VM's requests then (spec.template.spec.domain.resources.requests).
	Mutated  bool              `json:"mutated,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
	Message  string            `json:"message,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
}

// clusterScoped are the resources without a namespace; other objects of a file without one are in "default",
// as kubectl would create them.
var clusterScoped = map[string]bool{namespaces.Resource: true, storageClasses.Resource: true, settings.Resource: true}

// admitFiles runs the VirtualMachines of each YAML file through Harvester's VirtualMachine validator, as
// CREATEs by an ordinary user, through the same handler the webhook serves, and prints one JSON verdict per
// VirtualMachine. Each file is a cluster of its own: the objects of the kinds the validator reads (Namespaces,
// ResourceQuotas, NetworkAttachmentDefinitions, PersistentVolumeClaims, ...) of the -cluster files and of the
// file itself are there from the start (an object of the file replacing one of the same name), and its
// VirtualMachines are created in file order, each one allowed joining the cluster, so a later VM sees the earlier
// ones (a duplicate MAC address, say); a VM's namespace exists even when no file holds it. Objects of other kinds
// are skipped; a file without a VirtualMachine is an error.
func admitFiles(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var clusterFiles []string
	mutate := fs.Bool("mutate", false, "run Harvester's VirtualMachine mutator first, as the API server does, and judge what it makes")
	fs.Func("cluster", "a YAML file of objects every admitted file's cluster holds (repeatable)", func(f string) error {
		clusterFiles = append(clusterFiles, f)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return errors.New("admit needs at least one YAML file")
	}
	logrus.SetLevel(logrus.ErrorLevel) // its warnings (a VM without a maintenance-mode strategy) are no verdicts
	var shared []*unstructured.Unstructured
	for _, f := range clusterFiles {
		objs, err := readObjects(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		shared = append(shared, objs...)
	}
	enc := json.NewEncoder(stdout)
	for _, f := range files {
		verdicts, err := admitFile(f, shared, *mutate)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, v := range verdicts {
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
	}
	return nil
}

func admitFile(file string, shared []*unstructured.Unstructured, mutate bool) ([]verdict, error) {
	objs, err := readObjects(file)
	if err != nil {
		return nil, err
	}
	cluster := &memStore{}
	for _, o := range shared {
		if err := cluster.add(o); err != nil {
			return nil, err
		}
	}
	var vmObjs []*unstructured.Unstructured
	for _, o := range objs {
		if gvr, _ := resourceOf(o); gvr == vms {
			vmObjs = append(vmObjs, o)
		} else if err := cluster.add(o); err != nil {
			return nil, err
		}
	}
	if len(vmObjs) == 0 {
		return nil, errors.New("no VirtualMachine in it")
	}
	handler := newHandler(newValidator(cluster))
	// An admit file holds no CRDs: the mutator is the one of a Harvester without Kube-OVN's Subnets.
	mutator := newMutationHandler(newMutator(cluster, false))
	var out []verdict
	for _, vm := range vmObjs {
		// The API server refuses a create in a namespace that does not exist before any webhook is asked.
		if _, err := cluster.get(namespaces, "", vm.GetNamespace()); apierrors.IsNotFound(err) {
			ns := &unstructured.Unstructured{}
			ns.SetAPIVersion("v1")
			ns.SetKind(kinds[namespaces])
			ns.SetName(vm.GetNamespace())
			if err := cluster.add(ns); err != nil {
				return nil, err
			}
		}
		var v verdict
		mutated := false
		if mutate {
			if vm, mutated, v, err = mutateCreate(mutator, vm); err != nil {
				return nil, fmt.Errorf("VirtualMachine %s: %w", vm.GetName(), err)
			}
		}
		if !mutate || v.Allowed {
			if v, err = admitCreate(handler, vm); err != nil {
				return nil, fmt.Errorf("VirtualMachine %s: %w", vm.GetName(), err)
			}
			v.Mutated = mutated
			if mutated {
				v.Requests, _, _ = unstructured.NestedStringMap(vm.Object, "spec", "template", "spec", "domain", "resources", "requests")
			}
		}
		v.File = file
		if v.Allowed {
			if err := cluster.add(vm); err != nil {
				return nil, err
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// readObjects returns the objects of a YAML file that are of a kind the validator reads, namespaced ones
// without a namespace put in "default" as kubectl would.
func readObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		o := &unstructured.Unstructured{Object: doc}
		gvr, ok := resourceOf(o)
		if len(doc) == 0 || !ok {
			continue
		}
		if o.GetNamespace() == "" && !clusterScoped[gvr.Resource] {
			o.SetNamespace("default")
		}
		out = append(out, o)
	}
}

// admitCreate sends the AdmissionReview the API server would send for a create of vm to the validator's handler
// and returns the answer.
func admitCreate(handler http.Handler, vm *unstructured.Unstructured) (verdict, error) {
	answer, err := review(handler, validationPath, vm)
	if err != nil {
		return verdict{}, err
	}
	return verdictOf(vm, answer), nil
}

// mutateCreate sends the AdmissionReview for a create of vm to the mutator's handler, as the API server does
// before any validating webhook, and returns vm with the mutator's JSON patch applied as the API server applies it
// (k8s.io/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go: json-patch v4, whose replace of a missing
// key adds it, which the mutator relies on) and whether it changed anything; a refusal is the verdict, with
// allowed false.
func mutateCreate(handler http.Handler, vm *unstructured.Unstructured) (*unstructured.Unstructured, bool, verdict, error) {
	answer, err := review(handler, mutationPath, vm)
	if err != nil {
		return vm, false, verdict{}, err
	}
	v := verdictOf(vm, answer)
	if !answer.Allowed || len(answer.Patch) == 0 {
		return vm, false, v, nil
	}
	raw, err := vm.MarshalJSON()
	if err != nil {
		return vm, false, v, err
	}
	patch, err := jsonpatch.DecodePatch(answer.Patch)
	if err != nil {
		return vm, false, v, fmt.Errorf("the mutator's patch %s: %w", answer.Patch, err)
	}
	if raw, err = patch.Apply(raw); err != nil {
		return vm, false, v, fmt.Errorf("apply the mutator's patch %s: %w", answer.Patch, err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		return vm, false, v, err
	}
	return out, true, v, nil
}

func verdictOf(vm *unstructured.Unstructured, answer *admissionv1.AdmissionResponse) verdict {
	v := verdict{Name: vm.GetName(), Allowed: answer.Allowed, Warnings: answer.Warnings}
	if answer.Result != nil {
		v.Message = answer.Result.Message
	}
	return v
}

// review sends handler, at path, the AdmissionReview the API server would send for a create of vm by an ordinary
// user, and returns the response.
func review(handler http.Handler, path string, vm *unstructured.Unstructured) (*admissionv1.AdmissionResponse, error) {
	raw, err := vm.MarshalJSON()
	if err != nil {
		return nil, err
	}
	kind := metav1.GroupVersionKind{Group: vms.Group, Version: vms.Version, Kind: kinds[vms]}
	resource := metav1.GroupVersionResource{Group: vms.Group, Version: vms.Version, Resource: vms.Resource}
	request := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:             types.UID("admit-" + vm.GetName()),
			Kind:            kind,
			Resource:        resource,
			RequestKind:     &kind,
			RequestResource: &resource,
			Name:            vm.GetName(),
			Namespace:       vm.GetNamespace(),
			Operation:       admissionv1.Create,
			UserInfo:        authv1.UserInfo{Username: "dmdh-admit"},
			Object:          runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Response == nil {
		return nil, fmt.Errorf("%s answered %d %q: %v", path, rec.Code, rec.Body.String(), err)
	}
	return answer.Response, nil
}
