package config_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// genEntry is a user, cluster or context of a generated kubeconfig: its name and its fields, in order.
type genEntry struct {
	name     string
	fields   [][2]string // key, value (a YAML scalar, or a flow mapping for exec)
	override string      // with merge: a token given beside the merge key, which wins over a merged one
}

// genKubeconfig is a kubeconfig made by the generator, written out as YAML or JSON by text.
type genKubeconfig struct {
	clusters, users, contexts []genEntry
	current                   *string // nil: no current-context key
	json                      bool
	merge                     bool    // YAML: each user's fields merged in from an anchor (<<), some overridden
	dupCurrent                *string // a second current-context key, written after the first
	secondDoc                 bool
}

// files are real files a generated user or cluster may name, made once: client-go reads them, and what it read
// shows in its REST config (a token file's token, the certificate file paths).
type files struct{ dir string }

func newFiles(t *testing.T) files {
	f := files{t.TempDir()}
	for i := range 4 {
		os.WriteFile(f.tokenFile(i), []byte(fmt.Sprintf("file-token-%d", i)), 0o600)
		for _, name := range []string{"ca", "cert", "key"} {
			os.WriteFile(f.plain(fmt.Sprintf("%s-%d", name, i)), []byte("not read by ClientConfig"), 0o600)
		}
	}
	return f
}

func (f files) tokenFile(i int) string   { return filepath.Join(f.dir, fmt.Sprintf("token-%d", i)) }
func (f files) plain(name string) string { return filepath.Join(f.dir, name) }

// generate draws a kubeconfig whose names come from a small set, "" included, so that duplicates, dangling
// references and the entries named "" client-go falls back on all occur. User i authenticates as "token-<i>",
// "file-token-<i>" (a token file), "basic-<i>", a client certificate file, an exec plugin or nothing; cluster
// i's server is https://cluster-<i>.example, some with a CA file.
func generate(r *rand.Rand, f files) genKubeconfig {
	names := []string{"", "a", "b", "c"}
	pick := func() string { return names[r.IntN(len(names))] }
	// Most lists have names of their own, as a writer makes them; some repeat a name.
	namer := func() func() string {
		if r.IntN(4) == 0 {
			return pick
		}
		order := r.Perm(len(names))
		if r.IntN(3) > 0 { // "" named last: a list rarely has more than three entries
			order = r.Perm(len(names) - 1)
			order = append([]int{order[0] + 1, order[1] + 1, order[2] + 1}, 0)
		}
		return func() string { n := names[order[0]]; order = order[1:]; return n }
	}
	var g genKubeconfig
	name := namer()
	for i := range r.IntN(4) {
		e := genEntry{name: name(), fields: [][2]string{{"server", fmt.Sprintf("https://cluster-%d.example", i)}}}
		switch r.IntN(4) {
		case 0:
			e.fields = append(e.fields, [2]string{"certificate-authority", f.plain(fmt.Sprintf("ca-%d", i))})
		case 1:
			e.fields = append(e.fields, [2]string{"insecure-skip-tls-verify", "true"})
		}
		g.clusters = append(g.clusters, e)
	}
	name = namer()
	for i := range r.IntN(4) {
		e := genEntry{name: name()}
		switch r.IntN(9) {
		case 0, 6, 7:
			e.fields = [][2]string{{"token", fmt.Sprintf("token-%d", i)}}
		case 1:
			e.fields = [][2]string{{"tokenFile", f.tokenFile(i)}}
		case 2:
			e.fields = [][2]string{{"token", fmt.Sprintf("token-%d", i)}, {"tokenFile", f.tokenFile(i)}}
		case 3:
			e.fields = [][2]string{{"client-certificate", f.plain(fmt.Sprintf("cert-%d", i))}, {"client-key", f.plain(fmt.Sprintf("key-%d", i))}}
		case 4:
			e.fields = [][2]string{{"exec", `{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/false","interactiveMode":"Never"}`}}
		case 5:
			e.fields = [][2]string{{"username", fmt.Sprintf("basic-%d", i)}, {"password", "pw"}}
		}
		g.users = append(g.users, e)
	}
	// References mostly name an entry there is, as a writer makes them; some name any name.
	ref := func(entries []genEntry) string {
		if len(entries) == 0 || r.IntN(4) == 0 {
			return pick()
		}
		return entries[r.IntN(len(entries))].name
	}
	name = namer()
	for range 1 + r.IntN(3) - r.IntN(2) {
		g.contexts = append(g.contexts, genEntry{name: name(), fields: [][2]string{{"cluster", ref(g.clusters)}, {"user", ref(g.users)}}})
	}
	if r.IntN(5) > 0 {
		c := ref(g.contexts)
		g.current = &c
	}
	g.json = r.IntN(3) == 0
	if r.IntN(15) == 0 {
		c := pick()
		g.dupCurrent = &c
	}
	g.secondDoc = !g.json && r.IntN(15) == 0
	g.merge = !g.json && r.IntN(4) == 0
	for i := range g.users {
		if g.merge && r.IntN(3) == 0 {
			g.users[i].override = fmt.Sprintf("override-%d", i)
		}
	}
	return g
}

// text writes the kubeconfig out, by hand, so that what a writer would never produce (duplicates, empty names,
// repeated keys) is written as given.
func (g genKubeconfig) text() string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	val := func(v string) string {
		if strings.HasPrefix(v, "{") || v == "true" {
			return v
		}
		return q(v)
	}
	var anchors []string
	list := func(entries []genEntry, inner string) string {
		var items []string
		for i, e := range entries {
			var fields []string
			for _, kv := range e.fields {
				fields = append(fields, q(kv[0])+":"+val(kv[1]))
			}
			body := strings.Join(fields, ",")
			if g.merge && inner == "user" {
				anchors = append(anchors, fmt.Sprintf("&u%d {%s}", i, body))
				body = fmt.Sprintf("<<: *u%d", i)
				if e.override != "" {
					body += `, "token":` + q(e.override)
				}
			}
			items = append(items, fmt.Sprintf(`{"name":%s,%q:{%s}}`, q(e.name), inner, body))
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	users := list(g.users, "user")
	members := []string{`"apiVersion":"v1"`, `"kind":"Config"`}
	if len(anchors) > 0 { // a key client-go does not know, holding the anchors the users merge
		members = append(members, `"anchors":[`+strings.Join(anchors, ",")+"]")
	}
	members = append(members, `"clusters":`+list(g.clusters, "cluster"), `"users":`+users, `"contexts":`+list(g.contexts, "context"))
	if g.current != nil {
		members = append(members, `"current-context":`+q(*g.current))
	}
	if g.dupCurrent != nil {
		members = append(members, `"current-context":`+q(*g.dupCurrent))
	}
	if g.json {
		return "{" + strings.Join(members, ",") + "}"
	}
	// YAML: one member a line, in flow style inside (JSON is YAML).
	out := strings.Join(members, "\n")
	out = strings.NewReplacer(`"apiVersion":`, "apiVersion: ", `"kind":`, "kind: ", `"clusters":`, "clusters: ", `"users":`, "users: ",
		`"contexts":`, "contexts: ", `"current-context":`, "current-context: ", `"anchors":`, "anchors: ").Replace(out) + "\n"
	if g.secondDoc {
		out += "---\ncurrent-context: a\n"
	}
	return out
}

// identity is what a REST config authenticates as and with what: the user and cluster of the generator it
// shows, and whether client-go read a file or would run a plugin for it.
type identity struct {
	user, server     string
	usesFileOrPlugin bool
}

func identify(c *rest.Config) identity {
	id := identity{server: c.Host}
	switch {
	case c.BearerToken != "":
		id.user = c.BearerToken
	case c.Username != "":
		id.user = c.Username
	case c.CertFile != "":
		id.user = filepath.Base(c.CertFile)
	case c.ExecProvider != nil:
		id.user = "exec"
	}
	id.usesFileOrPlugin = c.BearerTokenFile != "" || c.CertFile != "" || c.KeyFile != "" || c.CAFile != "" || c.ExecProvider != nil || c.AuthProvider != nil
	return id
}

// The driver's choice is client-go's: over thousands of generated kubeconfigs (names from "", a, b, c, so that
// duplicates, dangling references and client-go's fallback on the entries named "" all occur; YAML and JSON; a
// repeated current-context key; a second document; users merged from YAML anchors, some fields overridden),
// client-go's own NewDefaultClientConfig(…).ClientConfig() on
// the whole kubeconfig is observed, with real files for every file field, and:
//   - whenever the driver accepts a kubeconfig, client-go authenticates as the user and against the cluster the
//     driver chose, reading no file and with no plugin, and the REST config the driver gives is client-go's own;
//   - whenever client-go would read a file or run a plugin, or fall back on an entry named "" or on none, the
//     driver refuses.
func TestChoiceIsClientGos(t *testing.T) {
	f := newFiles(t)
	r := rand.New(rand.NewPCG(39, 2))
	const runs = 2000
	var accepted, acceptedMerged, clientGoUsedFiles, clientGoFellBack int
	for i := range runs {
		g := generate(r, f)
		text := g.text()
		k, err := LoadContentKubeconfig([]byte(text))
		var mine *rest.Config
		if err == nil {
			mine, err = k.RESTConfig()
		}
		var theirs *rest.Config
		cfg, loadErr := clientcmd.Load([]byte(text))
		if loadErr == nil {
			theirs, loadErr = clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
		}
		if err == nil {
			accepted++
			if g.merge {
				acceptedMerged++
			}
			if loadErr != nil {
				t.Fatalf("run %d: the driver accepts what client-go refuses (%v):\n%s", i, loadErr, text)
			}
			got, want := identify(mine), identify(theirs)
			if got != want || want.usesFileOrPlugin {
				t.Fatalf("run %d: the driver chose user %q cluster %q and authenticates as %+v; client-go as %+v:\n%s", i, k.User, k.Cluster, got, want, text)
			}
			if k.Chosen.Clusters[k.Cluster].Server != theirs.Host {
				t.Fatalf("run %d: the driver chose cluster %q, client-go talks to %s:\n%s", i, k.Cluster, theirs.Host, text)
			}
			continue
		}
		if loadErr != nil {
			continue
		}
		id := identify(theirs)
		if id.usesFileOrPlugin {
			clientGoUsedFiles++
		}
		if cfg.Contexts[cfg.CurrentContext] == nil || cfg.CurrentContext == "" {
			clientGoFellBack++
		}
	}
	t.Logf("%d kubeconfigs: the driver accepted %d (%d of users merged from anchors); of those it refused and client-go took, %d would have had client-go read a file or run a plugin, %d fall back on an empty context",
		runs, accepted, acceptedMerged, clientGoUsedFiles, clientGoFellBack)
	if accepted < runs/40 || acceptedMerged < runs/400 || clientGoUsedFiles < runs/20 || clientGoFellBack < runs/20 {
		t.Errorf("the generator covers too little: %d accepted, %d merged, %d using files, %d falling back", accepted, acceptedMerged, clientGoUsedFiles, clientGoFellBack)
	}
}
