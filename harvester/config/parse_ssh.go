package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	"golang.org/x/crypto/ssh"

	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
)

// posixUser is what useradd accepts on the distributions Harvester guests run.
var posixUser = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

func parseSSH(p *Problems, opts drivers.DriverOptions, namespace string) SSHConfig {
	s := SSHConfig{
		User:           opts.String(FlagSSHUser),
		Port:           opts.Int(FlagSSHPort),
		Password:       opts.String(FlagSSHPassword),
		PrivateKeyPath: opts.String(FlagSSHPrivateKeyPath),
	}
	if !posixUser.MatchString(s.User) {
		p.Addf(FlagSSHUser, "must be a Linux user name (lowercase letters, digits, '_' or '-', at most 32), got %q", s.User)
	}
	if s.Port < 1 || s.Port > 65535 {
		p.Addf(FlagSSHPort, "must be a port number between 1 and 65535, got %d", s.Port)
	}
	if name := opts.String(FlagKeyPairName); name != "" {
		if ref, err := parseRef(name, namespace); err != nil {
			p.Addf(FlagKeyPairName, "%v", err)
		} else {
			s.KeyPair = &ref
		}
		if s.PrivateKeyPath == "" {
			p.Addf(FlagKeyPairName, "needs --%s: the private key of that key pair, so the machine can be reached over SSH", FlagSSHPrivateKeyPath)
		}
	}
	if s.PrivateKeyPath != "" {
		if err := checkPrivateKey(s.PrivateKeyPath); err != nil {
			p.Addf(FlagSSHPrivateKeyPath, "%v", err)
		}
	}
	s.ExtraKeyPairs = parseKeyPairList(p, opts.String(FlagSSHKeyPairs), namespace, s.KeyPair)
	return s
}

// MaxExtraKeyPairs bounds --harvester-ssh-keypairs: one lookup each in PreCreateCheck, and one entry each in the
// VM's harvesterhci.io/sshNames annotation. Teams name a handful of people; 32 leaves room.
const MaxExtraKeyPairs = 32

// parseKeyPairList reads --harvester-ssh-keypairs: comma-separated namespace/name or name (then in namespace).
// Empty entries are skipped. A key pair named twice, or the one --harvester-key-pair-name already installs
// (primary, nil without one), is kept once: installing a key twice adds nothing.
func parseKeyPairList(p *Problems, raw, namespace string, primary *Ref) []Ref {
	var refs []Ref
	seen := map[Ref]bool{}
	if primary != nil {
		seen[*primary] = true
	}
	entries := 0
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if entries++; entries > MaxExtraKeyPairs {
			p.Addf(FlagSSHKeyPairs, "names more than %d key pairs; install the rest through --%s", MaxExtraKeyPairs, FlagUserData)
			return nil
		}
		ref, err := parseRef(entry, namespace)
		if err != nil {
			p.Addf(FlagSSHKeyPairs, "key pair %v", err)
			continue
		}
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	return refs
}

// MaxPrivateKeySize bounds the file --harvester-ssh-private-key-path names: an RSA-16384 key in PEM is under
// 13 KiB, so anything larger is not a key.
const MaxPrivateKeySize = 64 << 10

// ReadPrivateKey reads the file --harvester-ssh-private-key-path names: a regular file of at most
// MaxPrivateKeySize bytes, read without blocking (see bounded.ReadRegularFile). Errors name the path, never the
// content.
func ReadPrivateKey(path string) ([]byte, error) {
	pem, err := bounded.ReadRegularFile(path, MaxPrivateKeySize)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("no file at %q", path)
	case err != nil:
		return nil, fmt.Errorf("cannot read %q: %v", path, err)
	}
	return pem, nil
}

// checkPrivateKey makes sure path holds a private key rancher-machine can use: readable, parseable and not
// protected by a passphrase (rancher-machine cannot ask for one).
func checkPrivateKey(path string) error {
	pem, err := ReadPrivateKey(path)
	if err != nil {
		return err
	}
	if _, err := ssh.ParsePrivateKey(pem); err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return fmt.Errorf("%q is protected by a passphrase; give a key without one", path)
		}
		return fmt.Errorf("%q is not an SSH private key (PEM or OpenSSH format): %v", path, err)
	}
	return nil
}
