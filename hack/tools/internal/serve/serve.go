// Package serve serves a test bed webhook tool's handler over HTTPS the way the bed expects of every one: on the
// address -listen names (port 0: any free one), its address written to -addr-file through a rename once it listens
// (the bed waits for that file), /healthz answering "ok", a panic answered with a 500 that names it instead of a
// dropped connection, until SIGTERM or SIGINT.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
)

// Webhook is one webhook server: what it serves, and the flags every webhook tool takes (Flags).
type Webhook struct {
	// Name starts the log lines: "kubevirt webhook".
	Name string
	// Panicked names, in a panic's 500 answer, what panicked: "KubeVirt's admitter".
	Panicked string
	// Paths are the handlers, by path; Run adds /healthz.
	Paths map[string]http.Handler

	listen, certFile, keyFile, addrFile string
}

// Flags registers -listen, -cert, -key and -addr-file on fs.
func (w *Webhook) Flags(fs *flag.FlagSet) {
	fs.StringVar(&w.listen, "listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	fs.StringVar(&w.certFile, "cert", "", "serving certificate (PEM)")
	fs.StringVar(&w.keyFile, "key", "", "serving key (PEM)")
	fs.StringVar(&w.addrFile, "addr-file", "", "write the address listened on to this file")
}

// Check refuses flags that leave the server without its certificate, key or address file.
func (w *Webhook) Check() error {
	if w.certFile == "" || w.keyFile == "" || w.addrFile == "" {
		return errors.New("webhook needs -cert, -key and -addr-file")
	}
	return nil
}

// Run serves until SIGTERM or SIGINT, logging to log.
func (w *Webhook) Run(log io.Writer) error {
	mux := http.NewServeMux()
	var paths []string
	for path, h := range w.Paths {
		mux.Handle(path, h)
		paths = append(paths, path)
	}
	slices.Sort(paths)
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(rw, "ok") })
	srv := &http.Server{Handler: w.recoverPanics(mux, log)}

	ln, err := net.Listen("tcp", w.listen)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, w.certFile, w.keyFile) }()
	if err := WriteAtomic(w.addrFile, ln.Addr().String()); err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: serving %s on https://%s\n", w.Name, strings.Join(paths, " and "), ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	select {
	case err := <-served:
		return err
	case s := <-sig:
		fmt.Fprintf(log, "%s: %v, stopping\n", w.Name, s)
		return srv.Shutdown(context.Background())
	}
}

// recoverPanics answers 500 with the panic instead of dropping the connection, and logs the stack: the API
// server then reports the webhook's failure with a reason instead of an EOF.
func (w *Webhook) recoverPanics(h http.Handler, log io.Writer) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(log, "%s: panic serving %s: %v\n%s", w.Name, r.URL.Path, p, debug.Stack())
				http.Error(rw, fmt.Sprintf("%s panicked: %v", w.Panicked, p), http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(rw, r)
	})
}

// WriteAtomic writes content to path through a rename: a reader sees all of it or no file.
func WriteAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
