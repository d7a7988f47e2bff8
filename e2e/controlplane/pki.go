package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the key material of one control plane, written as files the servers read.
type pki struct {
	caPEM []byte // the CA that signed the serving certificate; also kcm's --root-ca-file (ca.crt in SA tokens)

	caFile, certFile, keyFile string // serving certificate of kube-apiserver
	saKeyFile, saPubFile      string // service-account token signing key (RSA) and its public half
}

// newPKI generates a CA, a serving certificate for 127.0.0.1 signed by it, and an RSA service-account key, and
// writes them into dir. Nothing is reused between control planes.
func newPKI(dir string) (*pki, error) {
	ca, caDER, caKey, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "dmdh-e2e-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("make the CA: %w", err)
	}
	_, srvDER, srvKey, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		// 10.96.0.1 is the first address of --service-cluster-ip-range: the in-cluster "kubernetes" Service.
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
	}, ca, caKey)
	if err != nil {
		return nil, fmt.Errorf("make the serving certificate: %w", err)
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return nil, err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}

	p := &pki{
		caPEM:     pemBlock("CERTIFICATE", caDER),
		caFile:    filepath.Join(dir, "ca.crt"),
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		saKeyFile: filepath.Join(dir, "sa.key"),
		saPubFile: filepath.Join(dir, "sa.pub"),
	}
	files := map[string][]byte{
		p.caFile:    p.caPEM,
		p.certFile:  pemBlock("CERTIFICATE", srvDER),
		p.keyFile:   pemBlock("EC PRIVATE KEY", srvKeyDER),
		p.saKeyFile: pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)),
		p.saPubFile: pemBlock("PUBLIC KEY", saPubDER),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// issue makes a P-256 key and a week-long certificate for it from tmpl, signed by parent (self-signed when
// parent is nil).
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, []byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(7 * 24 * time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, der, key, err
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// randomToken returns a fresh bearer token for the token-auth file.
func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
