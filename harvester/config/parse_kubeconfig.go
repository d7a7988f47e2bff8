package config

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// ParseKubeconfig reads --harvester-kubeconfig-content: a kubeconfig as YAML or base64 of YAML. Empty is valid
// (the client falls back to $KUBECONFIG). The content is checked offline: it must parse and its current context
// must name a cluster with a server. Problems never quote the content: it holds credentials.
func ParseKubeconfig(p *Problems, raw string) []byte {
	data, err := DecodeKubeconfig(raw)
	if err != nil {
		p.Addf(FlagKubeconfigContent, "%v", err)
	}
	return data
}

// DecodeKubeconfig reads a Harvester kubeconfig given as YAML or base64 of YAML, the form of
// --harvester-kubeconfig-content and its environment variable, and checks it offline. Empty gives nil. The
// error never quotes the content: it holds credentials.
func DecodeKubeconfig(raw string) ([]byte, error) {
	if raw == "" {
		return nil, nil
	}
	data, _ := userdata.DecodeBase64OrPlain(raw, isKubeconfig)
	if err := checkKubeconfig(data); err != nil {
		return nil, err
	}
	return data, nil
}

// isKubeconfig reports whether b parses as a kubeconfig with at least one cluster.
func isKubeconfig(b []byte) bool {
	cfg, err := clientcmd.Load(b)
	return err == nil && len(cfg.Clusters) > 0
}

// checkKubeconfig validates a kubeconfig given as content without contacting its server: it must carry its
// credential inline (CheckInlineCredential), which is checked before client-go's client configuration, which
// would read the files it names.
func checkKubeconfig(data []byte) error {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("is not a kubeconfig (YAML or base64 of YAML): %v", err)
	}
	if err := CheckInlineCredential(cfg); err != nil {
		return err
	}
	if _, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig(); err != nil {
		return fmt.Errorf("is not a usable kubeconfig: %v", err)
	}
	return nil
}
