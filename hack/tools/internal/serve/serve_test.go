package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A handler's panic is a 500 that names it, and the stack goes to the log: the API server then says why the
// webhook failed instead of reporting an EOF.
func TestPanicIsAnAnswer(t *testing.T) {
	w := &Webhook{Name: "test webhook", Panicked: "the validator"}
	var log bytes.Buffer
	h := w.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("nil map") }), &log)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "the validator panicked: nil map") {
		t.Errorf("answer %d %q, want 500 naming the panic", rec.Code, rec.Body.String())
	}
	if !strings.Contains(log.String(), "test webhook: panic serving /validate: nil map") || !strings.Contains(log.String(), "goroutine") {
		t.Errorf("log %q, want the panic and its stack", log.String())
	}
}

// The address file appears whole, through a rename, and a server without its certificate, key or address file
// is refused before it listens.
func TestAddressFileAndFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "addr")
	if err := WriteAtomic(path, "127.0.0.1:4443"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "127.0.0.1:4443" {
		t.Errorf("address file %q, %v", b, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	if err := (&Webhook{certFile: "c", keyFile: "k"}).Check(); err == nil {
		t.Error("a webhook without -addr-file was accepted")
	}
}
