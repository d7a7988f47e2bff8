package harvester

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// prepareSSHKey puts the machine's private key into the machine store (StorePath/machines/<name>/id_rsa, where
// rancher-machine and Rancher look for it) and returns its public key in authorized_keys form. The key is the
// user's --harvester-ssh-private-key-path when given, else a new RSA-2048 key (the reference driver's kind, which
// every image's sshd accepts). Its public half is derived from the private key, so a user key needs no .pub file.
func (d *Driver) prepareSSHKey() (string, error) {
	path := d.GetSSHKeyPath()
	pemBytes, public, err := d.machineKey()
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(path, pemBytes, 0o600); err != nil {
		return "", fmt.Errorf("cannot store the machine's SSH key: %w", err)
	}
	if err := writeFileAtomic(path+".pub", []byte(public+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("cannot store the machine's SSH public key: %w", err)
	}
	return public, nil
}

// writeFileAtomic writes data to path with mode perm so that no reader ever sees a partial file or, for a
// private key, a file with wider permissions: a temporary file created with perm in the same directory is
// written, synced and renamed over path.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// machineKey returns the machine's private key (PEM) and its public key in authorized_keys form, as
// prepareSSHKey describes them, without storing anything.
func (d *Driver) machineKey() (pemBytes []byte, public string, err error) {
	if src := d.cfg.SSH.PrivateKeyPath; src != "" {
		if pemBytes, err = config.ReadPrivateKey(src); err != nil {
			return nil, "", fmt.Errorf("--%s: %v", config.FlagSSHPrivateKeyPath, err)
		}
	} else {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, "", fmt.Errorf("cannot generate an SSH key: %w", err)
		}
		pemBytes = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		return nil, "", fmt.Errorf("--%s: %s is not a usable SSH private key: %v", config.FlagSSHPrivateKeyPath, d.cfg.SSH.PrivateKeyPath, err)
	}
	return pemBytes, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), nil
}
