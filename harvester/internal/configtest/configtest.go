// Package configtest holds what the tests of several packages share about configurations: flag values that
// parse, a test credential, SSH keys, a kubeconfig that runs a plugin and a server that records what reaches it.
// Only tests import it.
package configtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// MinimalOptions are the legacy flags a docker-machine user gives at the least.
func MinimalOptions() config.Options {
	o := config.DefaultOptions()
	o[config.FlagImageName] = "default/ubuntu"
	o[config.FlagDiskSize] = 40
	o[config.FlagNetworkName] = "default/vlan1"
	return o
}

// With sets flag values, given as name, value pairs, and returns o.
func With(o config.Options, kv ...any) config.Options {
	for i := 0; i < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

// Kubeconfig is a credential that parses; its server does not exist.
const Kubeconfig = `apiVersion: v1
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

// WriteKey writes a new RSA private key (encrypted: protected by a passphrase) and its .pub into a temporary
// directory and returns the key's path.
func WriteKey(t *testing.T, encrypted bool) string {
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

// WantAll fails the test for each of want that text lacks.
func WantAll(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}

// ClientCertificate is a new self-signed client certificate and its private key, PEM-encoded.
func ClientCertificate(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "user"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
