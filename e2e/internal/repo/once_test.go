package repo

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A build outlives its caller's deadline but not its caller's cancellation (an interrupt).
func TestWithoutDeadline(t *testing.T) {
	t.Run("deadline passes", func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		ctx, stop := withoutDeadline(parent)
		defer stop()
		<-parent.Done()
		select {
		case <-ctx.Done():
			t.Fatalf("the build's context ended with its parent's deadline: %v", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		if _, ok := ctx.Deadline(); ok {
			t.Error("the build's context has a deadline")
		}
	})
	t.Run("parent cancelled", func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), time.Hour)
		ctx, stop := withoutDeadline(parent)
		defer stop()
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the build's context outlived its parent's cancellation")
		}
	})
}

// A lookup runs once per key; later callers get its result, an error included, and a caller whose deadline has
// already passed still gets a full run.
func TestOnceByKey(t *testing.T) {
	var o onceByKey[int]
	calls := 0
	f := func(ctx context.Context) (int, error) {
		calls++
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return 0, errTest
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for i := 0; i < 3; i++ {
		if _, err := o.do(expired, "k", f); err != errTest {
			t.Fatalf("call %d: err = %v, want the lookup's own error (not the caller's deadline)", i, err)
		}
	}
	if calls != 1 {
		t.Errorf("the lookup ran %d times, want once", calls)
	}
	if v, err := o.do(context.Background(), "other", func(context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Errorf("another key = %d, %v; want 7, nil", v, err)
	}
}

var errTest = errors.New("lookup failed")
