package config_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// decodeWithin runs DecodeKubeconfig and fails the test when it has not returned after 10 s: it opened a FIFO
// the kubeconfig names.
func decodeWithin(t *testing.T, kubeconfig string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := DecodeKubeconfig(kubeconfig); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("DecodeKubeconfig still runs after 10 s: it opened a file the kubeconfig names")
		return nil
	}
}

// emptyNamedShapes are kubeconfigs with which client-go's DirectClientConfig (NewDefaultClientConfig, no
// overrides) ends up with the user and the cluster named "": current-context unset, empty or naming no context
// (client-go v0.37 tools/clientcmd/client_config.go getContext: the context name is not "required", so a missing
// one is an empty context, whose user and cluster are ""), or a context that names "" for its user. USER is the
// user named "", SERVER the server of the cluster named "".
var emptyNamedShapes = []struct{ name, kubeconfig, field string }{
	{"no current-context", `apiVersion: v1
kind: Config
clusters: [{name: "", cluster: {server: "SERVER"}}, {name: h, cluster: {server: "https://192.0.2.11:6443"}}]
users: [{name: "", user: {USER}}, {name: u, user: {token: inline}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
`, "current-context"},
	{"empty current-context", `apiVersion: v1
kind: Config
clusters: [{name: "", cluster: {server: "SERVER"}}]
users: [{name: "", user: {USER}}]
contexts: [{name: h, context: {cluster: "", user: ""}}]
current-context: ""
`, "current-context"},
	{"current-context naming no context", `apiVersion: v1
kind: Config
clusters: [{name: "", cluster: {server: "SERVER"}}, {name: h, cluster: {server: "https://192.0.2.11:6443"}}]
users: [{name: "", user: {USER}}, {name: u, user: {token: inline}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: nowhere
`, "current-context"},
	{"a context named empty", `apiVersion: v1
kind: Config
clusters: [{name: "", cluster: {server: "SERVER"}}]
users: [{name: "", user: {USER}}]
contexts: [{name: "", context: {cluster: "", user: ""}}]
`, "current-context"},
	{"JSON without current-context", `{"apiVersion":"v1","kind":"Config","clusters":[{"name":"","cluster":{"server":"SERVER"}}],` +
		`"users":[{"name":"","user":{USER}}],"contexts":[{"name":"h","context":{"cluster":"h","user":"u"}}]}`, "current-context"},
	{"a context naming the empty user", `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "SERVER"}}]
users: [{name: "", user: {USER}}]
contexts: [{name: h, context: {cluster: h, user: ""}}]
current-context: h
`, "user"},
}

// shape fills a shape's user (YAML or JSON fields) and server.
func shape(kubeconfig, user, server string) string {
	if strings.HasPrefix(kubeconfig, "{") {
		user = yamlFlowToJSON(user)
	}
	return strings.NewReplacer("USER", user, "SERVER", server).Replace(kubeconfig)
}

// yamlFlowToJSON writes the few flow-mapping fields the shapes use ("tokenFile: /x, token: y") as JSON members.
func yamlFlowToJSON(fields string) string {
	var out []string
	for _, f := range strings.Split(fields, ", ") {
		k, v, _ := strings.Cut(f, ": ")
		out = append(out, fmt.Sprintf("%q:%q", k, v))
	}
	return strings.Join(out, ",")
}

// Whatever shape leads client-go to the user and cluster named "", the credential is refused before anything
// opens a file or runs a plugin, and the refusal names the field: a FIFO in each file field would hang the check,
// an exec or a token file would be accepted.
func TestEmptyNamedUserAndClusterAreRefused(t *testing.T) {
	fifo, _ := hostile.SpecialFiles(t)
	users := map[string]string{
		"tokenFile":          "tokenFile: " + fifo,
		"client-certificate": "client-certificate: " + fifo + ", client-key: " + fifo,
		"exec":               "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/false, interactiveMode: Never}",
		"inline token":       "token: inline-but-anonymous-entry",
	}
	for _, s := range emptyNamedShapes {
		for what, user := range users {
			if what == "exec" && strings.HasPrefix(s.kubeconfig, "{") {
				continue // a flow mapping is not JSON members
			}
			t.Run(s.name+", "+what, func(t *testing.T) {
				err := decodeWithin(t, shape(s.kubeconfig, user, "https://192.0.2.10:6443"))
				if err == nil || !strings.Contains(err.Error(), s.field) {
					t.Fatalf("want a refusal naming %s, got %v", s.field, err)
				}
				if strings.Contains(err.Error(), fifo) {
					t.Errorf("the refusal quotes a path of the kubeconfig: %v", err)
				}
			})
		}
	}
}

// shortSecret is a password too short and plain for Redact to recognise: only a message that never quotes a
// value keeps it out.
const shortSecret = "hunter2x"

// Two entries of one name: client-go refuses them with a message that prints the whole list (client-go
// tools/clientcmd/api/v1/conversion.go, duplicate name "…" in list: …), credentials included. The refusal names
// the list and never quotes what the entries hold.
func TestDuplicateNamesAreRefusedWithoutTheirContent(t *testing.T) {
	long := planted
	for _, tt := range []struct{ name, kubeconfig, want string }{
		{"users", `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: u, user: {token: LONG}}, {name: u, user: {username: admin, password: SHORT}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, "users"},
		{"clusters", `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://admin:SHORT@192.0.2.10:6443"}}, {name: h, cluster: {server: "https://LONG.example"}}]
users: [{name: u, user: {token: LONG}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, "clusters"},
		{"contexts", `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: u, user: {token: LONG}}]
contexts: [{name: h, context: {cluster: h, user: u, namespace: SHORT}}, {name: h, context: {cluster: LONG, user: u}}]
current-context: h
`, "contexts"},
		{"extensions", `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: u, user: {token: LONG, extensions: [{name: e, extension: {p: SHORT}}, {name: e, extension: {p: LONG}}]}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`, "users[0].user.extensions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kubeconfig := strings.NewReplacer("LONG", long, "SHORT", shortSecret).Replace(tt.kubeconfig)
			for _, form := range []string{kubeconfig, base64.StdEncoding.EncodeToString([]byte(kubeconfig))} {
				err := decodeWithin(t, form)
				if err == nil || !strings.Contains(err.Error(), "two of its "+tt.want) {
					t.Fatalf("want a refusal naming %s, got %v", tt.want, err)
				}
				if strings.Contains(err.Error(), long) || strings.Contains(err.Error(), shortSecret) {
					t.Errorf("the refusal quotes a credential: %v", err)
				}
			}
		})
	}
}

// inlineKubeconfig is a kubeconfig whose context h uses user u (an inline token) and cluster h.
const inlineKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "https://192.0.2.10:6443"}}]
users: [{name: u, user: {token: inline}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
`

// What a reader may take two ways is refused, naming what: several YAML documents (client-go reads the first
// only), a key given twice in one mapping (client-go keeps the last; YAML forbids it). A YAML merge key is YAML,
// read alike by every reader: the credential it merges in is judged like any other.
func TestAmbiguousKubeconfigsAreRefused(t *testing.T) {
	for _, tt := range []struct{ name, kubeconfig, want string }{
		{"a second document", inlineKubeconfig + "---\n" + strings.Replace(inlineKubeconfig, "token: inline", "tokenFile: /dev/zero", 1),
			"holds more than one YAML document"},
		{"a first document that is empty", "---\n---\n" + inlineKubeconfig, "holds more than one YAML document"},
		{"JSON after JSON", `{"apiVersion":"v1","kind":"Config"}` + "\n" + `{"current-context":"h"}`, "after its first document"},
		{"current-context twice", inlineKubeconfig + "current-context: other\n", "current-context is given twice"},
		{"a user's key twice", strings.Replace(inlineKubeconfig, "token: inline", "token: inline, token: "+shortSecret, 1),
			"users[0].user.token is given twice"},
		{"JSON key twice", `{"apiVersion":"v1","kind":"Config","current-context":"h","current-context":"x"}`, "current-context is given twice"},
		{"an unknown key twice", strings.Replace(inlineKubeconfig, "token: inline", shortSecret+": 1, "+shortSecret+": 2, token: inline", 1),
			"users[0].user.(a key not shown) is given twice"},
		{"an alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
			"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
			"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n" + inlineKubeconfig, "excessive aliasing"},
		{"a merged tokenFile", "x: &file {tokenFile: /dev/zero}\n" + strings.Replace(inlineKubeconfig, "{token: inline}", "{<<: *file}", 1),
			`its user "u" uses tokenFile`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeWithin(t, tt.kubeconfig)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want a refusal saying %q, got %v", tt.want, err)
			}
			if strings.Contains(err.Error(), shortSecret) {
				t.Errorf("the refusal quotes a value: %v", err)
			}
		})
	}
	if err := decodeWithin(t, "x: &tok {token: inline}\n"+strings.Replace(inlineKubeconfig, "{token: inline}", "{<<: *tok}", 1)); err != nil {
		t.Errorf("an inline token merged in is refused: %v", err)
	}
}
