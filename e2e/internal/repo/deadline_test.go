package repo

import (
	"context"
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
