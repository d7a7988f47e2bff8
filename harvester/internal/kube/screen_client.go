package kube

import (
	"encoding/base64"
	"errors"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
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
