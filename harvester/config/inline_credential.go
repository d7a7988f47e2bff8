package config

import (
	"fmt"
	"strings"
)

// A kubeconfig given as content — a Harvester cloud credential in Rancher, --harvester-kubeconfig-content or its
// environment variable, the copy saved with a machine, --harvester-cloud-provider-config — is data written by
// someone else: whoever may edit a cloud credential in Rancher may hold far less privilege than the provisioning
// Job or the Rancher server the driver runs in. client-go would run its exec plugin and read the files it names
// (tokenFile, client-certificate, client-key, certificate-authority) and send what it read to the server the
// kubeconfig names — the flaw Flux fixed as CVE-2022-24817. Such a kubeconfig may therefore authenticate only
// with what it carries inline. The kubeconfig Rancher makes for a Harvester cloud credential holds an inline token
// and certificate-authority-data, so Rancher's flow needs nothing else.

// RefusedField is a kubeconfig field a credential given as content may not use.
type RefusedField struct {
	Owner   string // "user" or "cluster": the part of the current context that uses it
	Name    string // the field as written in a kubeconfig, e.g. tokenFile
	does    string // what client-go would do with it
	instead string // the inline field to use instead
}

// InlineCredentialError is a kubeconfig given as content whose current context uses what it does not carry
// inline: an exec or auth-provider plugin, or a file on this machine. It names the user and cluster, never a
// value: a command line or a path may hold a secret.
type InlineCredentialError struct {
	User, Cluster string // the current context's user and cluster, as client-go chooses them
	Fields        []RefusedField
}

func (e *InlineCredentialError) Error() string {
	parts := make([]string, 0, len(e.Fields))
	for _, f := range e.Fields {
		name := e.User
		if f.Owner == "cluster" {
			name = e.Cluster
		}
		parts = append(parts, fmt.Sprintf("its %s %q uses %s, which %s: give %s instead", f.Owner, name, f.Name, f.does, f.instead))
	}
	return Redact(fmt.Sprintf("is refused: a kubeconfig given as content may carry its credential only inline (token, client-certificate-data "+
		"and client-key-data, username and password, certificate-authority-data), never a command to run or a file to "+
		"read on this machine; %s", strings.Join(parts, "; ")))
}

// checkInlineCredential refuses a kubeconfig given as content whose chosen user or cluster (the ones client-go
// authenticates with: see chooseAsClientGo) uses anything but inline data: exec, auth-provider, tokenFile,
// client-certificate, client-key or certificate-authority (the file forms). Users and clusters the current
// context does not name are never given to client-go (ContentKubeconfig.Chosen) and are ignored. It opens no
// file and runs nothing: it looks at the parsed kubeconfig only, before client-go's client configuration, which
// reads the files and runs the plugin of the user it is given.
func checkInlineCredential(k *ContentKubeconfig) error {
	e := &InlineCredentialError{User: k.User, Cluster: k.Cluster}
	refuse := func(used bool, owner, name, does, instead string) {
		if used {
			e.Fields = append(e.Fields, RefusedField{Owner: owner, Name: name, does: does, instead: instead})
		}
	}
	const runs, reads = "runs a command on this machine", "reads a file on this machine"
	u := k.Chosen.AuthInfos[k.User]
	refuse(u.Exec != nil, "user", "exec", runs, "the token it prints, as token")
	refuse(u.AuthProvider != nil, "user", "auth-provider", "runs an authentication plugin on this machine", "a token, as token")
	refuse(u.TokenFile != "", "user", "tokenFile", reads, "the token itself, as token")
	refuse(u.ClientCertificate != "", "user", "client-certificate", reads, "the certificate as client-certificate-data")
	refuse(u.ClientKey != "", "user", "client-key", reads, "the key as client-key-data")
	c := k.Chosen.Clusters[k.Cluster]
	refuse(c.CertificateAuthority != "", "cluster", "certificate-authority", reads, "the CA certificate as certificate-authority-data")
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}
