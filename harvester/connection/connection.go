// Package connection turns the Harvester credential into a client: the kubeconfig given as content (a cloud
// credential, the create flag, the copy saved with a machine) may carry its credential only inline and never runs
// a plugin, while a kubeconfig file the user names is read as kubectl reads it. It also tells when the credential's
// token expires (expiry.go: a JWT's exp claim; a Rancher token's as Rancher answers, rancher.go), for the warning
// of `check`, a create and a remove, and for the error of a rejected credential.
//
// It sits beside the client layer (harvester/internal/kube), on harvester/config: the Driver connects through it
// on first use, and the cloud-provider-config verb (harvester/guestaccount) without a Driver.
package connection

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/internal/version"
)

// RenewCredential tells a user whose credential Harvester rejected how to give a current one.
var RenewCredential = fmt.Sprintf("Renew it: in Rancher, update the Harvester cloud credential (Cluster Management → Cloud Credentials); with rancher-machine, pass a current kubeconfig with --%s or $KUBECONFIG",
	config.FlagKubeconfigContent)

// RenewForRemove tells a user whose removal failed for an expired or revoked credential how to give a current one
// and remove the machine. Rancher runs every removal with `rm --update-config` and the cloud credential's current
// content in the environment (rancher/rancher pkg/controllers/capr/machineprovision/args.go getArgsEnvAndStatus),
// so an updated credential is the one its next try uses; rancher-machine reads driver flags on rm only with
// --update-config.
var RenewForRemove = fmt.Sprintf("Renew it: in Rancher, update the Harvester cloud credential with a current kubeconfig (Cluster Management → Cloud Credentials), which the removal's next try uses (a removal that failed all its tries needs Force Delete and the VM deleted in Harvester: docs/day-two.md); with rancher-machine, rancher-machine rm --update-config --%s \"$(base64 < harvester.yaml | tr -d '\\n')\" <machine>",
	config.FlagKubeconfigContent)

// Credential is the Harvester kubeconfig the driver connects with (see restConfig).
type Credential struct {
	// Content is a kubeconfig given as content: a cloud credential, --harvester-kubeconfig-content or its
	// environment variable, the copy saved with a machine. Someone else wrote it: it may carry its credential
	// only inline.
	Content []byte
	// Path, when there is no Content, is a kubeconfig file the user named on their own command line
	// (cloud-provider-config --kubeconfig); with neither, $KUBECONFIG or ~/.kube/config. Those files are the
	// user's own, read as kubectl reads them.
	Path string
}

// Connect returns a client for a Harvester credential (see restConfig), and its token, which tells when it expires
// (see Token); a rejected credential's errors give a JWT's expiry as of now.
func Connect(cred Credential, now time.Time) (kube.Interface, *Token, error) {
	cfg, err := restConfig(cred)
	if err != nil {
		return nil, nil, err
	}
	token := &Token{rancher: newRancherToken(cfg)}
	token.jwt, _ = tokenExpiry(cfg.BearerToken)
	renew := RenewCredential
	if note := expiryNote(token.jwt, now); note != "" {
		renew = note + ". " + renew
	}
	c, err := kube.NewForConfig(cfg, renew)
	if err != nil {
		return nil, nil, kube.ScrubNotFound(err)
	}
	c.Screen().Hold(restSecrets(cfg)...) // before the first request: a server may echo its Authorization
	return c, token, nil
}

// CredentialSecrets are the secrets of a kubeconfig given as content, as its chosen user carries them inline
// (see contentRESTConfig): its token, its password and its client key; none when it is not one.
func CredentialSecrets(kubeconfig []byte) [][]byte {
	cfg, err := contentRESTConfig(kubeconfig)
	if err != nil {
		return nil
	}
	return restSecrets(cfg)
}

// restSecrets are the secrets of a REST config: what its credential sends or proves with.
func restSecrets(cfg *rest.Config) [][]byte {
	return [][]byte{[]byte(cfg.BearerToken), []byte(cfg.Password), cfg.KeyData}
}

// restConfig resolves the Harvester credential: the kubeconfig given as content, which may carry its credential
// only inline (see contentRESTConfig); else the file the user named, or those of $KUBECONFIG / ~/.kube/config,
// which are the docker-machine user's own and are read as kubectl reads them, exec plugins and file references
// included (the user who can point the driver at a file can run those commands and read those files already).
// In-cluster configuration is deliberately never used: inside Rancher's provisioning pod it would be Rancher's
// own cluster, not Harvester.
func restConfig(cred Credential) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if len(cred.Content) > 0 {
		cfg, err = contentRESTConfig(cred.Content)
	} else {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		where := "$KUBECONFIG or ~/.kube/config"
		if cred.Path != "" {
			rules.ExplicitPath, where = cred.Path, cred.Path
		}
		if err := config.CheckKubeconfigFiles(rules.GetLoadingPrecedence()); err != nil {
			return nil, err
		}
		raw, loadErr := rules.Load()
		if loadErr != nil {
			return nil, errors.New(config.Redact(fmt.Sprintf("cannot read the kubeconfig from %s: %v", where, kube.ScrubNotFound(loadErr))))
		}
		if len(raw.Clusters) == 0 {
			return nil, fmt.Errorf("no Harvester credential: pass --%s (or set $%s), or point $KUBECONFIG at a Harvester kubeconfig",
				config.FlagKubeconfigContent, config.EnvVar(config.FlagKubeconfigContent))
		}
		cfg, err = clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	}
	var inline *config.InlineCredentialError
	var refused *config.KubeconfigError
	switch {
	case errors.As(err, &inline), errors.As(err, &refused):
		return nil, fmt.Errorf("the Harvester kubeconfig %w", err)
	case err != nil:
		return nil, fmt.Errorf("the Harvester kubeconfig is not usable: %s", config.Redact(kube.ScrubNotFound(err).Error()))
	}
	cfg.UserAgent = "docker-machine-driver-harvester/" + version.Version
	// One plugin process serves one machine; a create makes a few dozen requests at most, in bursts.
	cfg.QPS, cfg.Burst = 20, 40
	return cfg, nil
}

// contentRESTConfig is the REST config of a kubeconfig given as content: data someone else wrote, read as
// client-go reads it, whose context, user and cluster are chosen as client-go chooses them and may authenticate
// only with what they carry inline (config.LoadContentKubeconfig); client-go is given those three alone.
func contentRESTConfig(kubeconfig []byte) (*rest.Config, error) {
	k, err := config.LoadContentKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return k.RESTConfig()
}
