package controlplane

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// pki is the key material of one control plane, written as files the servers read.
type pki struct {
	caPEM []byte // the CA that signed the serving certificate; also kcm's --root-ca-file (ca.crt in SA tokens)

	caFile, certFile, keyFile string // serving certificate of kube-apiserver
	saKeyFile, saPubFile      string // service-account token signing key and the file its public half is read from
}

// newPKI generates, with client-go's certificate helpers, a CA and a serving certificate for 127.0.0.1 signed by
// it (util/cert, the self-signed pair kube-apiserver itself makes when given none) and an ECDSA service-account
// key (util/keyutil), and writes them into dir. Nothing is reused between control planes.
func newPKI(dir string) (*pki, error) {
	chain, key, err := cert.GenerateSelfSignedCertKeyWithOptions(cert.SelfSignedCertKeyOptions{
		Host:         "127.0.0.1",
		AlternateDNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		// 10.96.0.1 is the first address of --service-cluster-ip-range: the in-cluster "kubernetes" Service.
		AlternateIPs: []net.IP{net.ParseIP("10.96.0.1")},
		MaxAge:       7 * 24 * time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("make the serving certificate: %w", err)
	}
	// The chain is the serving certificate followed by the CA that signed it.
	certs, err := cert.ParseCertsPEM(chain)
	if err != nil || len(certs) != 2 {
		return nil, fmt.Errorf("the serving certificate chain holds %d certificates, want 2: %v", len(certs), err)
	}
	caPEM, err := cert.EncodeCertificates(certs[1])
	if err != nil {
		return nil, err
	}
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}

	p := &pki{
		caPEM:     caPEM,
		caFile:    filepath.Join(dir, "ca.crt"),
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		saKeyFile: filepath.Join(dir, "sa.key"),
	}
	// --service-account-key-file takes private keys too: the public half is read from the key itself.
	p.saPubFile = p.saKeyFile
	if err := errors.Join(
		cert.WriteCert(p.caFile, p.caPEM),
		cert.WriteCert(p.certFile, chain),
		keyutil.WriteKey(p.keyFile, key),
		keyutil.WriteKey(p.saKeyFile, saKey),
	); err != nil {
		return nil, err
	}
	return p, nil
}

// randomToken returns a fresh bearer token for the token-auth file.
func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
