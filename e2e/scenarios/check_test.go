package scenarios

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
)

// The check verb runs a create's whole pre-flight against the real API server and writes nothing: every request
// goes through a proxy that records it, and the only ones that are not reads are the SelfSubjectRulesReview and
// SelfSubjectAccessReview creates, which the API server answers without storing anything (reads in effect), and
// the admission's dry runs of the Secret, then the VM (dryRun=All, stored neither). Every read asks for the API
// server's watch cache (resourceVersion=0): the pre-flight spares etcd.
func TestCheckVerbWritesNothing(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	newCLI(t, b.AdminKubeconfig()) // builds the plugin
	kubeconfig, recorded := recordingProxy(t, b)

	verb := func(args ...string) (string, int) {
		t.Helper()
		return runCheck(t, kubeconfig, args...)
	}
	good := checkArgs(ns)

	out, code := verb(good...)
	if code != 0 {
		t.Errorf("a good configuration: exit %d, want 0", code)
	}
	for _, want := range []string{"ok       credential", "ok       namespace", "ok       permissions", "ok       machine name",
		"ok       images and key pairs", "ok       networks", "skipped  IP pool", "ok       admission             Secret " + ns + "/checked-cloudinit and VM " + ns + "/checked accepted"} {
		if !strings.Contains(out, want) {
			t.Errorf("a good configuration: no line %q", want)
		}
	}

	bad := append(good[:len(good):len(good)], "--harvester-image-name", "default/no-such-image", "--harvester-network-name", "default/no-such-network")
	out, code = verb(bad...)
	if code != 1 {
		t.Errorf("a bad configuration: exit %d, want 1", code)
	}
	for _, want := range []string{"problem  images and key pairs  --harvester-image-name: image default/no-such-image does not exist", "problem  networks", "no-such-network", "ok       permissions",
		"skipped  admission             the VM cannot be built as a create builds it"} {
		if !strings.Contains(out, want) {
			t.Errorf("a bad configuration: no %q", want)
		}
	}
	if _, code := verb("--harvester-cpu-count"); code != 2 {
		t.Errorf("a malformed command line: exit %d, want 2", code)
	}

	requests := recorded()
	reviews, dryRuns := onlyReadsAndDryRuns(t, requests)
	if want := []string{"/api/v1/namespaces/" + ns + "/secrets", "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines"}; !slices.Equal(dryRuns, want) {
		t.Errorf("dry runs %v, want the good configuration's Secret, then its VM: %v", dryRuns, want)
	}
	if strings.Contains(out, "Checking Harvester") {
		t.Errorf("progress lines on stdout")
	}
	if len(requests) == 0 || reviews == 0 {
		t.Errorf("the proxy saw %d requests, %d reviews: %v", len(requests), reviews, requests)
	}
	t.Logf("%d requests through the proxy (%d reviews, %d dry runs) for two checks", len(requests), reviews, len(dryRuns))
}

// recordingProxy serves the bed's API server to a kubeconfig it returns, with the admin's credential, and records
// each request ("METHOD path?query"); recorded returns them so far.
func recordingProxy(t *testing.T, b *testbed.Bed) (kubeconfig []byte, recorded func() []string) {
	t.Helper()
	apiServer, err := url.Parse(b.AdminConfig().Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(b.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		requests []string
	)
	proxy := httputil.NewSingleHostReverseProxy(apiServer)
	proxy.Transport = transport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kubeconfig = []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: h\n  cluster:\n    server: " + srv.URL +
		"\ncontexts:\n- name: h\n  context:\n    cluster: h\n    user: u\nusers:\n- name: u\n  user: {}\ncurrent-context: h\n")
	return kubeconfig, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(requests)
	}
}

// onlyReadsAndDryRuns fails t for a request that may write: anything but a read from the API server's cache, an
// access or rules review, or a dry-run create of a Secret or a VM. It returns the number of reviews and the paths
// of the dry runs, in order.
func onlyReadsAndDryRuns(t *testing.T, requests []string) (reviews int, dryRuns []string) {
	t.Helper()
	for _, r := range requests {
		method, target, _ := strings.Cut(r, " ")
		path, rawQuery, _ := strings.Cut(target, "?")
		query, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case method == http.MethodGet:
			if query.Get("resourceVersion") != "0" {
				t.Errorf("a read not from the API server's cache: %s", r)
			}
		case method == http.MethodPost && (strings.HasSuffix(path, "/selfsubjectrulesreviews") || strings.HasSuffix(path, "/selfsubjectaccessreviews")):
			reviews++
		case method == http.MethodPost && slices.Equal(query["dryRun"], []string{"All"}) &&
			(strings.HasSuffix(path, "/secrets") || strings.HasSuffix(path, "/virtualmachines")):
			dryRuns = append(dryRuns, path)
		default:
			t.Errorf("check wrote: %s", r)
		}
	}
	return reviews, dryRuns
}

// checkArgs are a good small machine's flags in namespace ns.
func checkArgs(ns string) []string {
	return []string{"--harvester-vm-namespace", ns, "--harvester-image-name", "default/ubuntu-22.04", "--harvester-disk-size", "10",
		"--harvester-network-name", "default/vm-untag", "--harvester-cpu-count", "2", "--harvester-memory-size", "4"}
}

// runCheck runs the check verb for machine "checked" with kubeconfig in HARVESTER_KUBECONFIG_CONTENT (base64, as
// Rancher passes the cloud credential) and returns its stdout and exit code.
func runCheck(t *testing.T, kubeconfig []byte, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "docker-machine-driver-harvester"), append([]string{"check", "--machine-name", "checked"}, args...)...)
	cmd.Env = []string{"HARVESTER_KUBECONFIG_CONTENT=" + base64.StdEncoding.EncodeToString(kubeconfig)}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("check: %v\n%s", err, stderr.String())
	}
	t.Logf("check %s → exit %d\n%s%s", strings.Join(args, " "), code, out, stderr.String())
	return string(out), code
}

// The permissions are read from one SelfSubjectRulesReview of the real API server's RBAC: a credential that may
// only view the namespace is told what it may not do; one bound to cluster-admin by a RoleBinding in the
// namespace (Rancher's project members) may do everything a machine's life needs there.
func TestCheckVerbPermissions(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	newCLI(t, b.AdminKubeconfig()) // builds the plugin
	ctx := context.Background()
	viewer, err := b.Credential(ctx, credential.Spec{Namespace: ns, Name: "viewer", NamespaceRoles: []string{"view"}})
	if err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, viewer.Kubeconfig, checkArgs(ns)...)
	if code != 1 || !regexp.MustCompile(`problem  permissions +--harvester-kubeconfig-content: the credential may not create secrets`).MatchString(out) {
		t.Errorf("a viewer: exit %d, want 1 and the permissions problem", code)
	}
	// What it may not create is not sent as a dry run either: the admission line says why.
	if want := "skipped  admission             the credential may not create secrets and virtualmachines in namespace " + ns +
		", which a create needs: neither the Secret nor the VM was sent\n"; !strings.Contains(out, want) {
		t.Errorf("a viewer: no line %q", want)
	}
	owner, err := b.Credential(ctx, credential.Spec{Namespace: ns, Name: "owner", NamespaceRoles: []string{"cluster-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	// (It may not read the images in namespace default: that is the images check's problem.) What it may not
	// read — the network in namespace default, and so the image's storage class — is skipped, not ok, and fails
	// nothing by itself.
	out, _ = runCheck(t, owner.Kubeconfig, checkArgs(ns)...)
	for _, want := range []string{"ok       permissions",
		"skipped  networks              the credential may not get network-attachment-definitions in namespace default: cannot tell whether network default/vm-untag exists",
		"skipped  storage classes       disk-0: the storage class of image default/ubuntu-22.04 is not known"} {
		if !strings.Contains(out, want) {
			t.Errorf("a namespace owner: no line %q", want)
		}
	}
	if strings.Contains(out, "ok       networks") || strings.Contains(out, "ok       storage classes") {
		t.Errorf("a namespace owner: a check it could not make is ok")
	}
}
