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
	File     string   `json:"file"`
	Name     string   `json:"name"`
	Allowed  bool     `json:"allowed"`
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
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
		verdicts, err := admitFile(f, shared)
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

func admitFile(file string, shared []*unstructured.Unstructured) ([]verdict, error) {
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
		v, err := admitCreate(handler, vm)
		if err != nil {
			return nil, fmt.Errorf("VirtualMachine %s: %w", vm.GetName(), err)
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

// admitCreate sends the AdmissionReview the API server would send for a create of vm to handler and returns
// the answer.
func admitCreate(handler http.Handler, vm *unstructured.Unstructured) (verdict, error) {
	raw, err := vm.MarshalJSON()
	if err != nil {
		return verdict{}, err
	}
	kind := metav1.GroupVersionKind{Group: vms.Group, Version: vms.Version, Kind: kinds[vms]}
	resource := metav1.GroupVersionResource{Group: vms.Group, Version: vms.Version, Resource: vms.Resource}
	review := admissionv1.AdmissionReview{
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
	body, err := json.Marshal(review)
	if err != nil {
		return verdict{}, err
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, validationPath, bytes.NewReader(body)))
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Response == nil {
		return verdict{}, fmt.Errorf("the validator answered %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	v := verdict{Name: vm.GetName(), Allowed: answer.Response.Allowed, Warnings: answer.Response.Warnings}
	if answer.Response.Result != nil {
		v.Message = answer.Response.Result.Message
	}
	return v, nil
}
