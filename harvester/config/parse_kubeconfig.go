package config

import (
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
// --harvester-kubeconfig-content and its environment variable, and checks it offline (checkKubeconfig). Empty
// gives nil. The error never quotes the content: it holds credentials.
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

// isKubeconfig reports whether b decodes as a kubeconfig with at least one cluster (whatever is wrong with it:
// that is for checkKubeconfig to tell).
func isKubeconfig(b []byte) bool {
	cfg, err := decodeV1(b)
	return err == nil && len(cfg.Clusters) > 0
}

// checkKubeconfig reads a kubeconfig given as content (LoadContentKubeconfig: as client-go reads it, refusing
// what is ambiguous or not inline) and checks its chosen context with client-go's client configuration, without
// contacting the server.
func checkKubeconfig(data []byte) error {
	k, err := LoadContentKubeconfig(data)
	if err != nil {
		return err
	}
	_, err = k.RESTConfig()
	return err
}
