// Package connection turns the Harvester credential into a client: the kubeconfig given as content (a cloud
// credential, the create flag, the copy saved with a machine) may carry its credential only inline and never runs
// a plugin, while a kubeconfig file the user names is read as kubectl reads it. It also reads when the
// credential's token expires, for the create's warning and for the error of a rejected credential.
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
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/internal/version"
)

// RenewCredential tells a user whose credential Harvester rejected how to give a current one.
var RenewCredential = fmt.Sprintf("Renew it: in Rancher, update the Harvester cloud credential (Cluster Management → Cloud Credentials); with rancher-machine, pass a current kubeconfig with --%s or $KUBECONFIG",
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

// Connect returns a client for a Harvester credential (see restConfig), and the expiry of its token when the
// token says (see tokenExpiry); a rejected credential's errors give that expiry as of now.
func Connect(cred Credential, now time.Time) (kube.Interface, time.Time, error) {
	cfg, err := restConfig(cred)
	if err != nil {
		return nil, time.Time{}, err
	}
	expiry, _ := tokenExpiry(cfg.BearerToken)
	renew := RenewCredential
	if note := expiryNote(expiry, now); note != "" {
		renew = note + ". " + renew
	}
	c, err := kube.NewForConfig(cfg, renew)
	if err != nil {
		return nil, time.Time{}, kube.ScrubNotFound(err)
	}
	return c, expiry, nil
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
		raw, loadErr := rules.Load()
		if loadErr != nil {
			return nil, fmt.Errorf("cannot read the kubeconfig from %s: %v", where, kube.ScrubNotFound(loadErr))
		}
		if len(raw.Clusters) == 0 {
			return nil, fmt.Errorf("no Harvester credential: pass --%s (or set $%s), or point $KUBECONFIG at a Harvester kubeconfig",
				config.FlagKubeconfigContent, config.EnvVar(config.FlagKubeconfigContent))
		}
		cfg, err = clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	}
	var inline *config.InlineCredentialError
	switch {
	case errors.As(err, &inline):
		return nil, fmt.Errorf("the Harvester kubeconfig %w", err)
	case err != nil:
		return nil, fmt.Errorf("the Harvester kubeconfig is not usable: %v", kube.ScrubNotFound(err))
	}
	cfg.UserAgent = "docker-machine-driver-harvester/" + version.Version
	// One plugin process serves one machine; a create makes a few dozen requests at most, in bursts.
	cfg.QPS, cfg.Burst = 20, 40
	return cfg, nil
}

// contentRESTConfig is the REST config of a kubeconfig given as content: data someone else wrote, which may
// authenticate only with what it carries inline (config.CheckInlineCredential, checked before client-go reads any
// file it names). Behind that check, client-go is told to refuse any exec plugin all the same.
func contentRESTConfig(kubeconfig []byte) (*rest.Config, error) {
	raw, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := config.CheckInlineCredential(raw); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	denyPlugins(cfg)
	return cfg, nil
}

// denyPlugins makes client-go refuse to run cfg's exec plugin (its DenyAll policy) and drops its auth-provider
// plugin: a credential given as content never runs code, even past a check that let one through.
func denyPlugins(cfg *rest.Config) {
	if cfg.ExecProvider != nil {
		cfg.ExecProvider.PluginPolicy = clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyDenyAll}
	}
	cfg.AuthProvider = nil
}
