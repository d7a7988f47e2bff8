package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	v1 "kubevirt.io/api/core/v1"

	"kubevirt.io/kubevirt/pkg/virt-api/webhooks"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook/admitters"
)

// verdict is admit's report on one VirtualMachine.
type verdict struct {
	File     string   `json:"file"`
	Name     string   `json:"name"`
	Allowed  bool     `json:"allowed"`
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// admitFiles runs every VirtualMachine in the YAML files through virt-api's VirtualMachine admitter
// (kubevirt/kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/vms-admitter.go), as a CREATE by an
// ordinary user, and prints one JSON verdict per VirtualMachine. Documents of other kinds are skipped; a file
// without a VirtualMachine is an error. There is no cluster: a VM that references an instancetype or a
// preference cannot be resolved and is reported as an error.
func admitFiles(files []string, stdout io.Writer) error {
	if len(files) == 0 {
		return errors.New("admit needs at least one YAML file")
	}
	cfg, err := clusterConfig()
	if err != nil {
		return err
	}
	admitter := admitters.NewVMsAdmitter(cfg, nil, &webhooks.Informers{}, nil)
	enc := json.NewEncoder(stdout)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		raws, err := virtualMachines(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if len(raws) == 0 {
			return fmt.Errorf("%s: no VirtualMachine in it", f)
		}
		for _, raw := range raws {
			v, err := admitOne(admitter, raw)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			v.File = f
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// virtualMachines returns the VirtualMachine documents of a YAML stream as JSON.
func virtualMachines(data []byte) ([][]byte, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out [][]byte
	for {
		var doc runtime.RawExtension
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		var tm metav1.TypeMeta
		if len(doc.Raw) == 0 || json.Unmarshal(doc.Raw, &tm) != nil {
			continue
		}
		if tm.GroupVersionKind() == v1.VirtualMachineGroupVersionKind {
			out = append(out, doc.Raw)
		}
	}
}

func admitOne(admitter *admitters.VMsAdmitter, raw []byte) (v verdict, err error) {
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return v, err
	}
	v.Name = meta.Metadata.Name
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("VirtualMachine %s: KubeVirt's admitter panicked (an instancetype or preference needs a cluster): %v", v.Name, p)
		}
	}()
	resp := admitter.Admit(context.Background(), &admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
		UID:       types.UID("admit-" + v.Name),
		Kind:      metav1.GroupVersionKind(v1.VirtualMachineGroupVersionKind),
		Resource:  webhooks.VirtualMachineGroupVersionResource,
		Name:      v.Name,
		Namespace: meta.Metadata.Namespace,
		Operation: admissionv1.Create,
		UserInfo:  authv1.UserInfo{Username: "dmdh-admit"},
		Object:    runtime.RawExtension{Raw: raw},
	}})
	v.Allowed = resp.Allowed
	v.Warnings = resp.Warnings
	if resp.Result != nil {
		v.Message = resp.Result.Message
	}
	return v, nil
}
