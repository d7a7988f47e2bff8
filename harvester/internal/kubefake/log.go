package kubefake

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/rancher/machine/libmachine/log"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// CaptureLog sends the driver's log (milestones and detail) to a buffer for the test's duration.
func CaptureLog(t *testing.T) *SyncBuffer {
	t.Helper()
	buf := &SyncBuffer{}
	CaptureLogs(t, buf, buf)
	return buf
}

// CaptureLogs sends the milestones (what the user sees) to info and the detail to debug.
func CaptureLogs(t *testing.T, info, debug *SyncBuffer) {
	t.Helper()
	log.SetOutWriter(info)
	log.SetErrWriter(info)
	logging.SetDebugOutput(debug)
	t.Cleanup(func() {
		log.SetOutWriter(nopWriter{})
		log.SetErrWriter(nopWriter{})
		logging.SetDebugOutput(nopWriter{})
	})
}

// SyncBuffer is a buffer that goroutines may write at once.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// Eventually waits for cond, for assertions on what a background goroutine does.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
