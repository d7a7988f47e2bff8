//go:build deps

// Package deps pins the module requirements the driver is being built on while packages are still landing,
// so `go mod tidy` keeps them. It is never compiled into the plugin (build tag "deps").
package deps

import (
	_ "github.com/harvester/harvester/pkg/apis/harvesterhci.io/v1beta1"
	_ "github.com/rancher/machine/libmachine/drivers/plugin"
	_ "github.com/rancher/machine/libmachine/drivers/rpc"
	_ "github.com/sirupsen/logrus"
	_ "gopkg.in/yaml.v3"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/watch"
	_ "kubevirt.io/api/core/v1"
	_ "kubevirt.io/client-go/kubevirt"
)
