package kube

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

const redirectToken = "Q9-bearer-redirect-token"

// No call follows a redirect, over HTTP/1.1 or HTTP/2: a dry-run create (a 307 would replay it elsewhere without
// dryRun=All), a read (302), a watch of the VM client and of the dynamic client, and a delete. Nothing reaches the redirect's
// target, and the error, as it is and as Explain words it, names the API server and the target's host, never the
// redirect's query or the token.
func TestNoRedirectIsFollowed(t *testing.T) {
	ctx := context.Background()
	vm := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default"}}
	for _, tc := range []struct {
		name string
		call func(c *Client) error
	}{
		{"VM dry run (307)", func(c *Client) error {
			_, err := c.VirtualMachines("default").Create(ctx, vm, DryRunAll())
			return err
		}},
		{"Secret dry run (307)", func(c *Client) error {
			_, err := DryRunCreate(ctx, c, Secrets, "default", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "m1-cloudinit"}})
			return err
		}},
		{"GET (302)", func(c *Client) error {
			_, err := Get(ctx, c, Secrets, "default", "s1")
			return err
		}},
		{"VM watch (302)", func(c *Client) error {
			_, err := c.VirtualMachines("default").Watch(ctx, metav1.ListOptions{})
			return err
		}},
		{"dynamic watch (302)", func(c *Client) error {
			_, err := in(c, Secrets, "default").Watch(ctx, metav1.ListOptions{})
			return err
		}},
		{"delete (307)", func(c *Client) error {
			return c.VirtualMachines("default").Delete(ctx, "m1", metav1.DeleteOptions{})
		}},
	} {
		for _, h2 := range []bool{false, true} {
			name := tc.name
			if h2 {
				name += ", HTTP/2"
			}
			t.Run(name, func(t *testing.T) { refusedRedirect(t, h2, tc.call) })
		}
	}
}

// refusedRedirect makes call through a client of a Redirector (over HTTP/2 with h2) and checks the redirect was
// refused.
func refusedRedirect(t *testing.T, h2 bool, call func(c *Client) error) {
	newRedirector := configtest.NewRedirector
	if h2 {
		newRedirector = configtest.NewHTTP2Redirector
	}
	r := newRedirector(t)
	c, err := NewForConfig(&rest.Config{Host: r.URL, BearerToken: redirectToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "")
	if err != nil {
		t.Fatal(err)
	}
	err = call(c)
	if r.HTTP2() != h2 {
		t.Fatalf("HTTP/2 %v, want %v", r.HTTP2(), h2)
	}
	var redirect *RedirectError
	if !errors.As(err, &redirect) {
		t.Fatalf("want a RedirectError, got %v", err)
	}
	r.WantRefused(t, err, redirectToken)
	explained := c.Explain("ask about", "VM default/m1", err)
	r.WantRefused(t, explained, redirectToken)
	if !strings.HasPrefix(explained.Error(), "cannot ask about VM default/m1: Harvester at") || strings.Contains(explained.Error(), "unreachable") {
		t.Errorf("explained as %v", explained)
	}
}

// clientMakers are the calls that make an HTTP client, or a client that makes its own, from a rest.Config or
// without one: outside NewForConfig, each would follow redirects and skip the response budget.
var clientMakers = []string{
	"rest.HTTPClientFor", "rest.TransportFor", "rest.RESTClientFor", "rest.UnversionedRESTClientFor", "rest.RESTClientForConfigAndClient",
	"rest.InClusterConfig", "dynamic.NewForConfig", "dynamic.NewForConfigOrDie", "dynamic.NewForConfigAndClient",
	"kubernetes.NewForConfig", "kubernetes.NewForConfigOrDie", "kubernetes.NewForConfigAndClient",
	"discovery.NewDiscoveryClientForConfig", "discovery.NewDiscoveryClientForConfigAndClient", "transport.New",
	"http.Get", "http.Post", "http.Head", "http.PostForm", "http.DefaultClient", "http.Client", "http.DefaultTransport", "http.Transport",
}

// madeAt is where the plugin may make one (file below the module's root, and the call): the HTTP client and the
// two clients on it, in NewForConfig.
var madeAt = []string{
	"harvester/internal/kube/redirect.go: rest.TransportFor",
	"harvester/internal/kube/redirect.go: http.Client",
	"harvester/internal/kube/kube.go: dynamic.NewForConfigAndClient",
	"harvester/internal/kube/kubevirt.go: rest.RESTClientForConfigAndClient",
	// The configuration of the pod a Rancher Job runs in, for its one read of Rancher's cluster: its client is
	// HTTPClient's, clientFor's.
	"harvester/internal/kube/rancherlocal.go: rest.InClusterConfig",
}

// Every client the plugin builds goes through NewForConfig, whose HTTP client follows no redirect: the plugin's
// code (every package the binary is built from, tests aside) makes an HTTP client, or a client that makes its
// own, nowhere else. A new constructor fails here until it goes through NewForConfig.
func TestOneHTTPClientConstructor(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{end}}",
		"github.com/harvester/docker-machine-driver-harvester/cmd/docker-machine-driver-harvester").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/harvester/docker-machine-driver-harvester/"
	var root string
	var found []string
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, dir, _ := strings.Cut(line, " ")
		rel, ok := strings.CutPrefix(pkg, mod)
		if !ok {
			continue
		}
		root = strings.TrimSuffix(dir, rel)
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				var sel *ast.SelectorExpr
				switch n := n.(type) {
				case *ast.CallExpr: // a constructor called
					sel, _ = n.Fun.(*ast.SelectorExpr)
				case *ast.CompositeLit: // a client or transport made as a struct
					sel, _ = n.Type.(*ast.SelectorExpr)
				case *ast.SelectorExpr: // the process's shared client or transport
					if n.Sel.Name == "DefaultClient" || n.Sel.Name == "DefaultTransport" {
						sel = n
					}
				}
				if sel == nil {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && slices.Contains(clientMakers, id.Name+"."+sel.Sel.Name) {
					found = append(found, filepath.ToSlash(strings.TrimPrefix(name, root))+": "+id.Name+"."+sel.Sel.Name)
				}
				return true
			})
		}
	}
	if root == "" {
		t.Fatal("go list named no package of the module")
	}
	for _, f := range found {
		if !slices.Contains(madeAt, f) {
			t.Errorf("%s makes a client outside kube.NewForConfig: make it there, where the HTTP client follows no redirect (redirect.go)", f)
		}
	}
	for _, m := range madeAt {
		if !slices.Contains(found, m) {
			t.Errorf("%s is no longer there: update madeAt", m)
		}
	}
}
