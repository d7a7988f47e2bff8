package main

import (
	"net/http"
	"strings"
	"testing"
)

// The verbs that reach Harvester, check and cloud-provider-config, follow no redirect: against an API server
// that redirects every call (a 307 for writes, a 302 for reads) to another, nothing reaches the other, and the
// verb says which server redirected where, without the redirect's query or the credential.
func TestVerbsFollowNoRedirect(t *testing.T) {
	const token, query = "Q9-verb-redirect-token", "planted=Q9xw2Lr7Vb4Nc1Zt6Hy3"
	for _, args := range [][]string{checkArgs, cloudProviderArgs} {
		t.Run(args[0], func(t *testing.T) {
			target := newListener(t, nil)
			front := newListener(t, func(w http.ResponseWriter, r *http.Request) {
				code := http.StatusFound
				if r.Method != http.MethodGet {
					code = http.StatusTemporaryRedirect
				}
				http.Redirect(w, r, target.URL+r.URL.Path+"?"+query, code)
			})
			kubeconfig := kubeconfigFor(front.URL, "token: "+token, ", insecure-skip-tls-verify: true")
			env := func(k string) (string, bool) { return kubeconfig, k == "HARVESTER_KUBECONFIG_CONTENT" }
			stdout, stderr, code := runVerb(t, env, args[0], args[1:]...)
			out := stdout + stderr
			frontHost, targetHost := strings.TrimPrefix(front.URL, "https://"), strings.TrimPrefix(target.URL, "https://")
			if code == 0 || !strings.Contains(out, "Harvester at "+frontHost+" answered with a redirect") || !strings.Contains(out, "to host "+targetHost) {
				t.Errorf("exit %d, want the redirect to %s refused:\n%s", code, targetHost, out)
			}
			if strings.Contains(out, token) || strings.Contains(out, query) {
				t.Errorf("the output quotes the credential or the redirect's query:\n%s", out)
			}
			if got := target.reached(); got != "" {
				t.Errorf("the redirect's target was reached: %s", got)
			}
			if front.reached() == "" {
				t.Error("nothing reached the API server")
			}
		})
	}
}
