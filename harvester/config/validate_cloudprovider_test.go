package config_test

import (
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// guestKubeconfig is a kubeconfig for the guest: server, user name and token as given.
func guestKubeconfig(server, user, token string) string {
	return "apiVersion: v1\nkind: Config\nclusters:\n- name: h\n  cluster: {server: \"" + server + "\", insecure-skip-tls-verify: true}\n" +
		"users:\n- name: " + user + "\n  user: {token: " + token + "}\n" +
		"contexts:\n- name: h\n  context: {cluster: h, user: " + user + "}\ncurrent-context: h\n"
}

// The driver's own credential never goes into a guest, however it is written: the check reads who the kubeconfig
// authenticates as, not its bytes.
func TestGuestKubeconfigIsNotTheDriversCredential(t *testing.T) {
	const adminToken = "not-a-real-token" // configtest.Kubeconfig's
	certAdmin := "apiVersion: v1\nkind: Config\nclusters:\n- name: h\n  cluster: {server: \"https://192.0.2.10:6443\", insecure-skip-tls-verify: true}\n" +
		"users:\n- name: admin\n  user: {client-certificate-data: " + base64.StdEncoding.EncodeToString([]byte("CERT")) + ", client-key-data: " + base64.StdEncoding.EncodeToString([]byte("KEY")) + "}\n" +
		"contexts:\n- name: h\n  context: {cluster: h, user: admin}\ncurrent-context: h\n"
	certGuest := strings.NewReplacer("192.0.2.10", "192.0.2.99", "name: admin", "name: ccm", "user: admin", "user: ccm").Replace(certAdmin)
	tests := []struct {
		name, own, guest string
		refused          bool
	}{
		{"the same bytes", configtest.Kubeconfig, configtest.Kubeconfig, true},
		{"the token quoted differently", configtest.Kubeconfig, guestKubeconfig("https://192.0.2.10:6443", "admin", "'"+adminToken+"'"), true},
		{"the token under another user, server name and context", configtest.Kubeconfig, guestKubeconfig("https://harvester.example:6443", "ccm", `"`+adminToken+`"`), true},
		{"the token in JSON", configtest.Kubeconfig, `{"apiVersion":"v1","kind":"Config","clusters":[{"name":"x","cluster":{"server":"https://192.0.2.10:6443"}}],"users":[{"name":"u","user":{"token":"` + adminToken + `"}}],"contexts":[{"name":"c","context":{"cluster":"x","user":"u"}}],"current-context":"c"}`, true},
		{"the client certificate elsewhere", certAdmin, certGuest, true},
		{"a scoped token", configtest.Kubeconfig, guestKubeconfig("https://192.0.2.10:6443", "ccm", "scoped-token"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := configtest.With(configtest.MinimalOptions(), FlagKubeconfigContent, tt.own, FlagCloudProviderConfig, tt.guest)
			_, err := ParseConfig("m1", o)
			refused := err != nil && strings.Contains(err.Error(), "--harvester-cloud-provider-config: is the Harvester credential of the driver itself")
			if refused != tt.refused {
				t.Fatalf("refused = %v, want %v: %v", refused, tt.refused, err)
			}
			if err != nil && (strings.Contains(err.Error(), adminToken) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte("KEY")))) {
				t.Errorf("the error quotes the credential: %v", err)
			}
		})
	}
}

// A server URL is shown without its user information, and a value that is no URL is not shown at all.
func TestGuestServerNeverQuotesUserinfo(t *testing.T) {
	for server, want := range map[string]string{
		"https://admin:s3cr3t-pw@192.0.2.10:6443":             `server "https://192.0.2.10:6443" carries a user name or password in the URL`,
		"http://admin:s3cr3t-pw@192.0.2.10:6443":              `server "http://192.0.2.10:6443" must be an https URL`,
		"https://x:s3cr3t-pw@rancher.example/k8s/clusters/c1": `carries a user name or password`,
		"https://[s3cr3t-pw":                                  "the value is not a URL; not shown",
	} {
		o := configtest.With(configtest.MinimalOptions(), FlagClusterName, "gc1", FlagGenerateCloudProviderConfig, true, FlagCloudProviderServer, server)
		_, err := ParseConfig("m1", o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", server, want, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
}
