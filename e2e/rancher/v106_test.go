package rancher_test

import "github.com/rancher/machine/libmachine/mcnflag"

// v106Flags are the flags of the driver Rancher ships, harvester/docker-machine-driver-harvester v1.0.6
// (harvester/flags.go, Driver.GetCreateFlags), with the values they declare; their usage texts only become the
// CRD's descriptions and are left out. Existing HarvesterConfigs were made under the CRD of these flags.
func v106Flags() []mcnflag.Flag {
	s := func(name, value string) mcnflag.Flag {
		return &mcnflag.StringFlag{Name: "harvester-" + name, Value: value}
	}
	i := func(name string, value int) mcnflag.Flag {
		return &mcnflag.IntFlag{Name: "harvester-" + name, Value: value}
	}
	b := func(name string) mcnflag.Flag { return &mcnflag.BoolFlag{Name: "harvester-" + name} }
	return []mcnflag.Flag{
		s("kubeconfig-content", ""), s("cluster-type", ""), s("cluster-id", ""), s("cluster-name", ""),
		s("vm-namespace", "default"), i("cpu-count", 2), i("memory-size", 4), i("disk-size", 0), s("disk-bus", ""),
		s("image-name", ""), s("disk-info", ""), s("ssh-user", "root"), i("ssh-port", 22), s("ssh-password", ""),
		s("key-pair-name", ""), s("ssh-private-key-path", ""), s("network-type", ""), s("network-name", ""),
		s("network-model", ""), s("network-info", ""), s("cloud-config", ""), s("user-data", ""),
		s("network-data", ""), s("vm-affinity", ""), b("enable-efi"), b("enable-secure-boot"), s("vgpu-info", ""),
		b("cpu-pinning"), b("isolate-emulator-thread"), b("enable-tpm"), i("reserved-memory-size", -1),
		s("cpu-model", ""),
	}
}
