package harvester

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minimalOptions are the legacy flags a docker-machine user gives at the least.
func minimalOptions() Options {
	o := DefaultOptions()
	o[FlagImageName] = "default/ubuntu"
	o[FlagDiskSize] = 40
	o[FlagNetworkName] = "default/vlan1"
	return o
}

func with(o Options, kv ...any) Options {
	for i := 0; i < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: harvester
  cluster: {server: "https://192.0.2.10:6443", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: not-a-real-token}
contexts:
- name: harvester
  context: {cluster: harvester, user: admin}
current-context: harvester
`

func writeKey(t *testing.T, encrypted bool) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	if encrypted {
		//lint:ignore SA1019 only used to produce a passphrase-protected key for the test
		block, err = x509.EncryptPEMBlock(rand.Reader, block.Type, block.Bytes, []byte("secret"), x509.PEMCipherAES256) //nolint:staticcheck
		if err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantAll fails the test for each of want that text lacks.
func wantAll(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}
