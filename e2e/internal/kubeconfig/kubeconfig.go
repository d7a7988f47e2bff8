// Package kubeconfig writes the token kubeconfigs the test bed hands out.
package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Token returns a kubeconfig for a bearer token, shaped like the one Harvester's
// POST /v1/harvester/kubeconfig returns: one cluster, user and context, all named "default", the CA embedded,
// and the context's namespace set when namespace is not empty.
func Token(server string, caPEM []byte, token, namespace string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["default"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "default", AuthInfo: "default", Namespace: namespace}
	cfg.CurrentContext = "default"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig for %s: %w", server, err)
	}
	return out, nil
}

// RESTConfig parses a kubeconfig into a client configuration.
func RESTConfig(kubeconfig []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parse kubeconfig: %w", err)
	}
	return cfg, nil
}
