package config_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// credential is a kubeconfig whose current context uses user u and cluster h, with the given YAML for each, and
// an unused user and cluster that carry every refused field.
func credential(user, cluster string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: h
  cluster: {server: "https://192.0.2.10:6443"%s}
- name: unused
  cluster: {server: "https://192.0.2.11:6443", certificate-authority: /dev/zero}
users:
- name: u
  user: {%s}
- name: unused
  user: {tokenFile: /dev/zero, client-certificate: /dev/zero, client-key: /dev/zero, exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/false}}
contexts:
- name: h
  context: {cluster: h, user: u}
- name: other
  context: {cluster: unused, user: unused}
current-context: h
`, cluster, user)
}

// A kubeconfig given as content may authenticate only with what it carries inline: each refused field of the
// current context's user or cluster is named with its inline alternative; unused users and clusters are ignored.
func TestCredentialGivenAsContentIsInlineOnly(t *testing.T) {
	fifo, sock := hostile.SpecialFiles(t)
	for _, tt := range []struct {
		name          string
		user, cluster string
		refused       []string // kubeconfig fields, in order
		want          []string
	}{
		{"inline token", `token: abc`, ``, nil, nil},
		{"inline certificates", `client-certificate-data: Zm9v, client-key-data: YmFy`, `, certificate-authority-data: Zm9v`, nil, nil},
		{"user name and password", `username: admin, password: pw`, ``, nil, nil},
		{"exec", `exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "touch marker"]}`, ``,
			[]string{"exec"}, []string{`its user "u" uses exec, which runs a command on this machine: give the token it prints, as token instead`}},
		{"auth-provider", `auth-provider: {name: oidc, config: {idp-issuer-url: "https://192.0.2.1"}}`, ``,
			[]string{"auth-provider"}, []string{`its user "u" uses auth-provider, which runs an authentication plugin on this machine: give a token, as token instead`}},
		{"token file", `tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token`, ``,
			[]string{"tokenFile"}, []string{`its user "u" uses tokenFile, which reads a file on this machine: give the token itself, as token instead`}},
		{"FIFO token file", `tokenFile: ` + fifo, ``, []string{"tokenFile"}, nil},
		{"socket token file", `tokenFile: ` + sock, ``, []string{"tokenFile"}, nil},
		{"client certificate and key files", `client-certificate: /dev/zero, client-key: ` + fifo, ``,
			[]string{"client-certificate", "client-key"}, []string{
				`its user "u" uses client-certificate, which reads a file on this machine: give the certificate as client-certificate-data instead`,
				`its user "u" uses client-key, which reads a file on this machine: give the key as client-key-data instead`}},
		{"certificate authority file", `token: abc`, `, certificate-authority: ` + fifo,
			[]string{"certificate-authority"}, []string{`its cluster "h" uses certificate-authority, which reads a file on this machine: give the CA certificate as certificate-authority-data instead`}},
		{"every refused field", `token: abc, tokenFile: /dev/zero, client-certificate: /dev/zero, client-key: /dev/zero, exec: {apiVersion: client.authentication.k8s.io/v1, command: x}, auth-provider: {name: oidc}`,
			`, certificate-authority: /dev/zero`, []string{"exec", "auth-provider", "tokenFile", "client-certificate", "client-key", "certificate-authority"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kubeconfig := credential(tt.user, tt.cluster)
			for _, form := range []string{kubeconfig, base64.StdEncoding.EncodeToString([]byte(kubeconfig))} {
				done := make(chan error, 1)
				go func() { _, err := DecodeKubeconfig(form); done <- err }()
				var err error
				select {
				case err = <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("the check still runs after 10 s: it opened a file the kubeconfig names")
				}
				var inline *InlineCredentialError
				if tt.refused == nil {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					continue
				}
				if !errors.As(err, &inline) {
					t.Fatalf("want an InlineCredentialError, got %v", err)
				}
				var got []string
				for _, f := range inline.Fields {
					got = append(got, f.Name)
				}
				if strings.Join(got, " ") != strings.Join(tt.refused, " ") {
					t.Errorf("refused fields %q, want %q", got, tt.refused)
				}
				configtest.WantAll(t, err.Error(), append([]string{"is refused: a kubeconfig given as content may carry its credential only inline"}, tt.want...)...)
				for _, path := range []string{fifo, sock, "/dev/zero", "/bin/sh", "touch marker", "serviceaccount"} {
					if strings.Contains(err.Error(), path) {
						t.Errorf("the error quotes %q, a value of the kubeconfig: %v", path, err)
					}
				}
			}
		})
	}
}

// The rule holds for every way a credential reaches the parser (--harvester-kubeconfig-content, its environment
// variable through rancher-machine's options, plain or base64) and for the kubeconfig written into guests
// (--harvester-cloud-provider-config), each refusal naming its flag.
func TestFileReferencesRefusedInEveryKubeconfigFlag(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	execUser := fmt.Sprintf(`exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "touch %s; echo '{}'"]}`, marker)
	caFile := credential(`token: abc`, `, certificate-authority: /dev/zero`)
	for _, flag := range []string{FlagKubeconfigContent, FlagCloudProviderConfig} {
		for _, kubeconfig := range []string{credential(execUser, ``), caFile} {
			for _, form := range []string{kubeconfig, base64.StdEncoding.EncodeToString([]byte(kubeconfig))} {
				_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), flag, form))
				configtest.WantAll(t, fmt.Sprint(err), "--"+flag+": is refused: a kubeconfig given as content may carry its credential only inline")
			}
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the exec plugin ran: %s exists", marker)
	}
}
