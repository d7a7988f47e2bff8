package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// The Client's clients pass what the cluster says through its Screen (screen.go) before anyone reads it: every
// error they return, the Status of a watch's error event, and the status messages of every object they return —
// status.message and status.reason, and the message and reason of each condition. Nothing else of an object is
// touched: names, specs and the rest of a status are data the driver acts on, not words it prints.
//
// They also hold every Secret that passes through them: one written, before it is sent (its values, and their
// base64, as the Secret's JSON shows them to a webhook that judges it), and one read, as it arrives.

// Err returns err with the cluster's words in it screened. A failure Status keeps its code, reason and details
// (IsNotFound, IsGone and the webhook's name read them) and has its message and its causes' messages screened;
// another error keeps its chain and has its text screened (client-go's may quote a body it could not decode),
// unless it is the driver's own about the request it sent (a refused redirect, a response past its budget).
func (s *Screen) Err(err error) error {
	if err == nil || s.empty() {
		return err
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		was := status.Status()
		st := s.status(was)
		if st.Message == was.Message && sameCauses(st, was) {
			return err
		}
		screened := &apierrors.StatusError{ErrStatus: st}
		if _, direct := err.(apierrors.APIStatus); direct {
			return screened
		}
		return &screenedError{text: s.Text(err.Error()), err: screened}
	}
	var (
		redirect *RedirectError
		tooLarge *ResponseTooLargeError
	)
	if errors.As(err, &redirect) || errors.As(err, &tooLarge) {
		return err // the driver's own words, about the request it sent
	}
	if text := s.Text(err.Error()); text != err.Error() {
		return &screenedError{text: text, err: err}
	}
	return err
}

func (s *Screen) empty() bool {
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.windows) == 0 && len(s.short) == 0 && !s.overflow
}

// status is st with its message and its causes' messages screened.
func (s *Screen) status(st metav1.Status) metav1.Status {
	st.Message = s.Text(st.Message)
	if st.Details != nil {
		d := *st.Details
		d.Causes = append([]metav1.StatusCause(nil), d.Causes...)
		for i := range d.Causes {
			d.Causes[i].Message = s.Text(d.Causes[i].Message)
		}
		st.Details = &d
	}
	return st
}

func sameCauses(a, b metav1.Status) bool {
	if a.Details == nil || b.Details == nil {
		return true
	}
	for i := range a.Details.Causes {
		if a.Details.Causes[i].Message != b.Details.Causes[i].Message {
			return false
		}
	}
	return true
}

// screenedError is an error whose text was screened; its chain leads to what it stands for.
type screenedError struct {
	text string
	err  error
}

func (e *screenedError) Error() string { return e.text }
func (e *screenedError) Unwrap() error { return e.err }

// object screens the status messages of obj, which the caller owns (see above).
func (s *Screen) object(obj runtime.Object) {
	if v := reflect.ValueOf(obj); obj == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return
	}
	switch o := obj.(type) {
	case *metav1.Status:
		*o = s.status(*o)
	case *unstructured.Unstructured:
		s.unstructured(o.Object)
	case *unstructured.UnstructuredList:
		for i := range o.Items {
			s.unstructured(o.Items[i].Object)
		}
	case *kubevirtv1.VirtualMachine:
		s.vmStatus(&o.Status)
	case *kubevirtv1.VirtualMachineList:
		for i := range o.Items {
			s.vmStatus(&o.Items[i].Status)
		}
	case *kubevirtv1.VirtualMachineInstance:
		s.vmiStatus(&o.Status)
	case *kubevirtv1.VirtualMachineInstanceList:
		for i := range o.Items {
			s.vmiStatus(&o.Items[i].Status)
		}
	}
}

func (s *Screen) vmStatus(st *kubevirtv1.VirtualMachineStatus) {
	for i := range st.Conditions {
		st.Conditions[i].Reason, st.Conditions[i].Message = s.Text(st.Conditions[i].Reason), s.Text(st.Conditions[i].Message)
	}
}

func (s *Screen) vmiStatus(st *kubevirtv1.VirtualMachineInstanceStatus) {
	st.Reason = s.Text(st.Reason)
	for i := range st.Conditions {
		st.Conditions[i].Reason, st.Conditions[i].Message = s.Text(st.Conditions[i].Reason), s.Text(st.Conditions[i].Message)
	}
}

// unstructured screens an object as JSON holds it: a Status's message and its causes', else the status messages.
func (s *Screen) unstructured(obj map[string]any) {
	screenField := func(m map[string]any, key string) {
		if v, ok := m[key].(string); ok {
			m[key] = s.Text(v)
		}
	}
	if obj["kind"] == "Status" {
		screenField(obj, "message")
		if d, ok := obj["details"].(map[string]any); ok {
			if causes, ok := d["causes"].([]any); ok {
				for _, c := range causes {
					if c, ok := c.(map[string]any); ok {
						screenField(c, "message")
					}
				}
			}
		}
		return
	}
	st, ok := obj["status"].(map[string]any)
	if !ok {
		return
	}
	screenField(st, "message")
	screenField(st, "reason")
	if conds, ok := st["conditions"].([]any); ok {
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok {
				screenField(c, "message")
				screenField(c, "reason")
			}
		}
	}
}

// watched screens the events of w; of a watch of Secrets, it holds their values as they arrive.
func (s *Screen) watched(w watch.Interface, err error, secrets bool) (watch.Interface, error) {
	if err != nil {
		return nil, s.Err(err)
	}
	sw := &screenedWatch{next: w, s: s, secrets: secrets, out: make(chan watch.Event), stop: make(chan struct{})}
	go sw.loop()
	return sw, nil
}

// screenedWatch passes a watch's events on, screened. Unlike watch.Filter it stops passing them when it is
// stopped, whether or not anyone still reads: an informer stops reading when it stops its watch.
type screenedWatch struct {
	next    watch.Interface
	s       *Screen
	secrets bool
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
}

func (w *screenedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *screenedWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.next.Stop()
	})
}

func (w *screenedWatch) loop() {
	defer close(w.out)
	for e := range w.next.ResultChan() {
		if u, ok := e.Object.(*unstructured.Unstructured); ok && w.secrets && e.Type != watch.Error {
			w.s.holdSecret(u.Object, false)
		}
		if e.Object != nil && !w.s.empty() {
			w.s.object(e.Object)
		}
		select {
		case w.out <- e:
		case <-w.stop:
			return
		}
	}
}

// screened screens what a call returned.
func screened[T runtime.Object](s *Screen, obj T, err error) (T, error) {
	if err != nil {
		return obj, s.Err(err)
	}
	if !s.empty() {
		s.object(obj)
	}
	return obj, nil
}

// screenedKubevirt is KubevirtInterface through a Screen.
type screenedKubevirt struct {
	next KubevirtInterface
	s    *Screen
}

func (k screenedKubevirt) VirtualMachines(ns string) VirtualMachineInterface {
	return screenedVMs{k.next.VirtualMachines(ns), k.s}
}

func (k screenedKubevirt) VirtualMachineInstances(ns string) VirtualMachineInstanceInterface {
	return screenedVMIs{k.next.VirtualMachineInstances(ns), k.s}
}

type screenedVMs struct {
	next VirtualMachineInterface
	s    *Screen
}

func (c screenedVMs) Create(ctx context.Context, vm *kubevirtv1.VirtualMachine, opts metav1.CreateOptions) (*kubevirtv1.VirtualMachine, error) {
	out, err := c.next.Create(ctx, vm, opts)
	return screened(c.s, out, err)
}

func (c screenedVMs) Update(ctx context.Context, vm *kubevirtv1.VirtualMachine, opts metav1.UpdateOptions) (*kubevirtv1.VirtualMachine, error) {
	out, err := c.next.Update(ctx, vm, opts)
	return screened(c.s, out, err)
}

func (c screenedVMs) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.s.Err(c.next.Delete(ctx, name, opts))
}

func (c screenedVMs) Get(ctx context.Context, name string, opts metav1.GetOptions) (*kubevirtv1.VirtualMachine, error) {
	out, err := c.next.Get(ctx, name, opts)
	return screened(c.s, out, err)
}

func (c screenedVMs) List(ctx context.Context, opts metav1.ListOptions) (*kubevirtv1.VirtualMachineList, error) {
	out, err := c.next.List(ctx, opts)
	return screened(c.s, out, err)
}

func (c screenedVMs) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.next.Watch(ctx, opts)
	return c.s.watched(w, err, false)
}

func (c screenedVMs) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*kubevirtv1.VirtualMachine, error) {
	out, err := c.next.Patch(ctx, name, pt, data, opts, sub...)
	return screened(c.s, out, err)
}

func (c screenedVMs) Stop(ctx context.Context, name string, opts *kubevirtv1.StopOptions) error {
	return c.s.Err(c.next.Stop(ctx, name, opts))
}

type screenedVMIs struct {
	next VirtualMachineInstanceInterface
	s    *Screen
}

func (c screenedVMIs) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.s.Err(c.next.Delete(ctx, name, opts))
}

func (c screenedVMIs) Get(ctx context.Context, name string, opts metav1.GetOptions) (*kubevirtv1.VirtualMachineInstance, error) {
	out, err := c.next.Get(ctx, name, opts)
	return screened(c.s, out, err)
}

func (c screenedVMIs) List(ctx context.Context, opts metav1.ListOptions) (*kubevirtv1.VirtualMachineInstanceList, error) {
	out, err := c.next.List(ctx, opts)
	return screened(c.s, out, err)
}

func (c screenedVMIs) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.next.Watch(ctx, opts)
	return c.s.watched(w, err, false)
}

func (c screenedVMIs) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*kubevirtv1.VirtualMachineInstance, error) {
	out, err := c.next.Patch(ctx, name, pt, data, opts, sub...)
	return screened(c.s, out, err)
}

// screenedDynamic is dynamic.Interface through a Screen.
type screenedDynamic struct {
	next dynamic.Interface
	s    *Screen
}

func (d screenedDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	next := d.next.Resource(gvr)
	secrets := gvr.GroupResource() == schema.GroupResource{Resource: "secrets"}
	return screenedNamespaceable{screenedResource{next, d.s, secrets}, next}
}

type screenedNamespaceable struct {
	screenedResource
	next dynamic.NamespaceableResourceInterface
}

func (r screenedNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return screenedResource{r.next.Namespace(ns), r.s, r.secrets}
}

// screenedResource is a resource of the dynamic client through a Screen; of Secrets, it holds their values.
type screenedResource struct {
	next    dynamic.ResourceInterface
	s       *Screen
	secrets bool
}

// sent holds the values of a Secret about to be sent.
func (r screenedResource) sent(obj *unstructured.Unstructured) {
	if r.secrets && obj != nil {
		r.s.holdSecret(obj.Object, true)
	}
}

// got screens what a call returned and holds the values of the Secrets in it.
func (r screenedResource) got(obj runtime.Object, err error) error {
	if err == nil && r.secrets {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			r.s.holdSecret(o.Object, false)
		case *unstructured.UnstructuredList:
			for i := range o.Items {
				r.s.holdSecret(o.Items[i].Object, false)
			}
		}
	}
	_, err = screened(r.s, obj, err)
	return err
}

func (r screenedResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.Create(ctx, obj, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.Update(ctx, obj, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.UpdateStatus(ctx, obj, opts)
	return out, r.got(out, err)
}

func (r screenedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	return r.s.Err(r.next.Delete(ctx, name, opts, sub...))
}

func (r screenedResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	return r.s.Err(r.next.DeleteCollection(ctx, opts, list))
}

func (r screenedResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := r.next.Get(ctx, name, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	out, err := r.next.List(ctx, opts)
	return out, r.got(out, err)
}

func (r screenedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.next.Watch(ctx, opts)
	return r.s.watched(w, err, r.secrets)
}

// Patch sends no Secret the driver holds in full (the driver's patches of a Secret set its owner); what it returns
// is held.
func (r screenedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := r.next.Patch(ctx, name, pt, data, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.Apply(ctx, name, obj, opts, sub...)
	return out, r.got(out, err)
}

func (r screenedResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	r.sent(obj)
	out, err := r.next.ApplyStatus(ctx, name, obj, opts)
	return out, r.got(out, err)
}

// holdSecret holds the values of a Secret as JSON holds it (data in base64, stringData as text): decoded, and
// also as they are when the driver sends it.
func (s *Screen) holdSecret(obj map[string]any, sending bool) {
	if obj == nil || (obj["kind"] != nil && obj["kind"] != "Secret") {
		return
	}
	var values [][]byte
	data, _ := obj["data"].(map[string]any)
	for _, v := range data {
		encoded, ok := v.(string)
		if !ok {
			continue
		}
		if raw, err := base64.StdEncoding.DecodeString(encoded); err == nil {
			values = append(values, raw)
		}
		if sending {
			values = append(values, []byte(encoded))
		}
	}
	stringData, _ := obj["stringData"].(map[string]any)
	for _, v := range stringData {
		if text, ok := v.(string); ok {
			values = append(values, []byte(text))
		}
	}
	s.Hold(values...)
}
