package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

const heldToken = "Q9xw2Lr7Vb4Nc1Zt6Hy3"

// screenedFake is a Client over client-go's dynamic fake (no VMs), its screen holding heldToken.
func screenedFake(t *testing.T) (*Client, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	dyn := dynamicfake.NewSimpleDynamicClient(scheme)
	c := New(nil, dyn, "harvester.test:6443", "")
	c.Screen().HoldString(heldToken)
	return c, dyn
}

// A failure Status is screened — its message and its causes' — and keeps what the driver decides by: its code,
// reason and details (IsGone still knows the object).
func TestClientScreensAFailureStatus(t *testing.T) {
	c, dyn := screenedFake(t)
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "s1")
	notFound.ErrStatus.Message = "secret s1 not found, token " + heldToken
	notFound.ErrStatus.Details.Causes = []metav1.StatusCause{{Message: "cause " + heldToken, Field: "data"}}
	dyn.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, notFound })
	_, err := Get(context.Background(), c, Secrets, "default", "s1")
	var status apierrors.APIStatus
	if !IsGone(err, "secrets", "s1") || strings.Contains(err.Error(), heldToken) || !errors.As(err, &status) ||
		strings.Contains(status.Status().Details.Causes[0].Message, heldToken) || status.Status().Details.Causes[0].Field != "data" {
		t.Errorf("got %v (%+v)", err, status)
	}
	if got := c.Explain("read", "Secret default/s1", err).Error(); strings.Contains(got, heldToken) || !strings.Contains(got, "token "+Withheld) {
		t.Errorf("explained: %s", got)
	}
}

// The status messages of the objects a call returns are screened (status.message and each condition's), nothing
// else of them; the Secrets a call sends are held before it is sent, their values and their base64, and those it
// reads as they arrive.
func TestClientScreensObjectsAndHoldsSecrets(t *testing.T) {
	ctx := context.Background()
	c, dyn := screenedFake(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-m1-" + heldToken[:8], Namespace: "default"},
		Status: corev1.PodStatus{Message: "guest printed " + heldToken, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Message: "no host: " + heldToken}}}}
	if _, err := Create(ctx, c, Pods, "default", pod); err != nil {
		t.Fatal(err)
	}
	got, err := Get(ctx, c, Pods, "default", pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != pod.Name || got.Status.Message != "guest printed "+Withheld || got.Status.Conditions[0].Message != "no host: "+Withheld {
		t.Errorf("the Pod as read: %s, %+v", got.Name, got.Status)
	}

	sent := "written-secret-value-Zt6Hy3"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "m1-cloudinit", Namespace: "default"}, Data: map[string][]byte{"userdata": []byte(sent)}}
	encoded := base64.StdEncoding.EncodeToString([]byte(sent))
	dyn.PrependReactor("create", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest("refused: " + sent + " (" + encoded + ")")
	})
	_, err = DryRunCreate(ctx, c, Secrets, "default", secret)
	if err == nil || strings.Contains(err.Error(), sent[:12]) || strings.Contains(err.Error(), encoded[:12]) {
		t.Errorf("the refusal of the Secret sent: %v", err)
	}

	read := "read-secret-value-Lr7Vb4"
	ud, err := ToUnstructured(Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ud", Namespace: "default"}, Data: map[string][]byte{"userdata": []byte(read)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := dyn.Tracker().Add(ud); err != nil { // past the screen
		t.Fatal(err)
	}
	if _, err := Get(ctx, c, Secrets, "default", "ud"); err != nil {
		t.Fatal(err)
	}
	if got := c.Screen().Text("echo " + read); got != "echo "+Withheld {
		t.Errorf("the Secret read is not held: %q", got)
	}
}

// A watch passes its events screened — an error event's Status, the objects' status messages — and holds the
// Secrets of a watch of Secrets as they arrive; stopped, it stops whether or not anyone reads.
func TestClientScreensWatches(t *testing.T) {
	c, dyn := screenedFake(t)
	events := watch.NewFake()
	dyn.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) { return true, events, nil })
	w, err := in(c, Secrets, "default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go events.Error(&metav1.Status{Status: metav1.StatusFailure, Message: "watch broke at " + heldToken, Code: 500})
	next := func() watch.Event {
		select {
		case e := <-w.ResultChan():
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return watch.Event{}
	}
	if e := next(); e.Type != watch.Error || e.Object.(*metav1.Status).Message != "watch broke at "+Withheld {
		t.Errorf("error event: %+v", e.Object)
	}
	arrived := "watched-secret-value-Nc1Zt6"
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "t", "namespace": "default"},
		"data": map[string]any{"token": base64.StdEncoding.EncodeToString([]byte(arrived))}}}
	go events.Add(u)
	next()
	if got := c.Screen().Text("token " + arrived); got != "token "+Withheld {
		t.Errorf("the Secret watched is not held: %q", got)
	}
	// Nobody reads this one: Stop must not wait for a reader. The screen's loop takes it from the fake and then
	// waits to pass it on; Add returns once it is taken, and must have returned before Stop closes the fake's
	// channel (a send beside a close is a data race, which -race reported).
	added := make(chan struct{})
	go func() { events.Add(u.DeepCopy()); close(added) }()
	<-added
	w.Stop()
	select {
	case _, open := <-w.ResultChan():
		for open {
			_, open = <-w.ResultChan()
		}
	case <-time.After(10 * time.Second):
		t.Error("the watch did not end once stopped")
	}
}
