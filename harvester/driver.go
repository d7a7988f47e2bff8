// Package harvester is the Harvester node driver: a rancher/machine driver that runs each machine as a KubeVirt
// VirtualMachine on a Harvester cluster.
//
// It is the top of three layers: harvester/config turns flag values into a validated Config without touching
// the network, harvester/build makes the API objects from it (pure), and this package is the Driver, the
// lifecycle rancher-machine calls (PreCreateCheck, Create, state, power, Remove) and the guest cluster's
// cloud-provider account. It sends the objects through harvester/internal/kube, the only code that talks to the
// API server, and allocates static addresses through harvester/internal/ippool.
package harvester

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/rancher/machine/libmachine/drivers"
	rpcdriver "github.com/rancher/machine/libmachine/drivers/rpc"
	"github.com/rancher/machine/libmachine/mcnflag"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/internal/version"
)

// DriverName is the name rancher-machine and Rancher know this driver by. Another name would lose Rancher's
// Harvester UI form, cloud credential type and cluster-name flag.
const DriverName = "harvester"

// Driver is one machine. Its exported fields are persisted by rancher-machine as JSON in the machine store (and
// by Rancher in the machine-state Secret), so they hold only what later commands need to find the machine again;
// credentials, passwords and user data stay in memory. VMNamespace and ClusterName keep the reference driver's
// JSON names so machines it created can still be removed after an upgrade; so does the one exception to "no
// credential in the state", the reference driver's own saved credential (see legacyState).
type Driver struct {
	*drivers.BaseDriver

	VMNamespace string
	ClusterName string
	// DriverVersion is the driver version that created the machine, for diagnostics.
	DriverVersion string
	// IPPoolNetwork is namespace/name of the network whose --harvester-ip-pool the machine's address comes from:
	// Remove releases the address there. "" without a pool.
	IPPoolNetwork string `json:",omitempty"`
	// VMUID is the UID of the VM this machine's create made, recorded the moment the VM exists, so the state
	// rancher-machine saves after Create carries it. Remove and the power commands act on that VM only (see
	// ownership.go). "" for machines of the reference driver or of earlier versions of this one.
	VMUID string `json:",omitempty"`
	// CreateID is the random id of the machine's create, chosen before rancher-machine first saves the state
	// and written on the VM and its cloud-init Secret (config.AnnotationCreateID): it identifies them when a
	// create died before the state could record VMUID.
	CreateID string `json:",omitempty"`

	cfg        *config.Config // set by SetConfigFromFlags, used by PreCreateCheck and Create in the same process
	kubeconfig []byte         // the Harvester credential: flags, environment, or a reference-driver machine's state
	// legacyCredential is the credential a reference-driver machine's saved state carries, as saved; it is saved
	// again with the machine (MarshalJSON) until a credential is given to this process or the machine is removed.
	legacyCredential string
	// credentialErr is why the credential given to this process could not be used; reported when the cluster is
	// first needed, since UnmarshalJSON must not fail a machine's loading.
	credentialErr error
	clients       kube.Interface // built on first use (api); tests set fakes
	// credentialExpiry is when the credential's token expires, when it says (a JWT's exp); zero otherwise.
	credentialExpiry time.Time
	looked           *lookups // facts found by PreCreateCheck, reused by Create
}

// NewDriver returns a driver for machine hostName whose store lives under storePath.
func NewDriver(hostName, storePath string) *Driver {
	return &Driver{BaseDriver: &drivers.BaseDriver{MachineName: hostName, StorePath: storePath}}
}

// DriverName returns "harvester".
func (d *Driver) DriverName() string { return DriverName }

// SetConfigFromFlags parses and validates every flag (see ParseConfig). It reads no cluster.
func (d *Driver) SetConfigFromFlags(opts drivers.DriverOptions) error {
	cfg, err := config.ParseConfig(d.MachineName, opts)
	if err != nil {
		return err
	}
	d.cfg = cfg
	d.VMNamespace = cfg.Namespace
	d.ClusterName = cfg.ClusterName
	d.IPPoolNetwork = config.IPPoolNetwork(cfg)
	d.SSHUser = cfg.SSH.User
	d.SSHPort = cfg.SSH.Port
	d.DriverVersion = version.Version
	if cfg.Kubeconfig != nil {
		d.kubeconfig = cfg.Kubeconfig
	}
	return nil
}

// UnmarshalJSON loads a machine's persisted state and then reloads the credential from this process's command
// line and environment (--harvester-kubeconfig-content / HARVESTER_KUBECONFIG_CONTENT), so a credential rotated
// since the machine was created is used instead of a stale one — `rm --update-config` relies on it. It must stay
// cheap and offline: rancher-machine calls it on every plugin start.
func (d *Driver) UnmarshalJSON(data []byte) error {
	type persisted Driver // same fields, no UnmarshalJSON method
	p := persisted(*d)
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("cannot read the machine's saved driver state: %w", err)
	}
	*d = Driver(p)

	var legacy legacyState
	if json.Unmarshal(data, &legacy) == nil && legacy.KubeConfigContent != "" {
		d.legacyCredential = legacy.KubeConfigContent
		kc, err := config.DecodeKubeconfig(legacy.KubeConfigContent)
		d.kubeconfig, d.credentialErr = kc, nil
		if err != nil {
			d.credentialErr = fmt.Errorf("the Harvester credential the earlier driver saved with this machine %v; pass a current one with --%s or $%s",
				err, config.FlagKubeconfigContent, config.EnvVar(config.FlagKubeconfigContent))
		}
	}
	opts := rpcdriver.GetDriverOpts(d.GetCreateFlags(), os.Args)
	if _, ok := opts.Values[config.FlagKubeconfigContent]; ok {
		var p config.Problems
		if kc := config.ParseKubeconfig(&p, opts.String(config.FlagKubeconfigContent)); kc != nil {
			// A credential given again replaces the saved one, in memory and in the state saved next.
			d.kubeconfig, d.credentialErr, d.legacyCredential = kc, nil, ""
		} else if err := p.Err(); err != nil {
			d.credentialErr = fmt.Errorf("%v (from the command line or $%s)", err, config.EnvVar(config.FlagKubeconfigContent))
		}
	}
	return nil
}

// legacyState is the part of a reference-driver machine's saved state (harvester/docker-machine-driver-harvester
// harvester/harvester.go, its Driver struct) this driver reads besides the shared fields: the Harvester
// credential, which the reference driver saved with every machine created with --harvester-kubeconfig-content.
// This driver never saves a credential of its own, but it keeps that one: dropping it on the first command would
// leave the machine without a credential for every later one (stop, start, rm), and its VM in Harvester.
type legacyState struct {
	KubeConfigContent string `json:",omitempty"`
}

// MarshalJSON saves the machine's state: the exported fields, plus the reference driver's credential for the
// machines that came with one (see legacyState).
func (d *Driver) MarshalJSON() ([]byte, error) {
	type persisted Driver // same fields, no MarshalJSON method
	return json.Marshal(struct {
		*persisted
		legacyState
	}{(*persisted)(d), legacyState{KubeConfigContent: d.legacyCredential}})
}

// GetSSHHostname returns the machine's IP address.
func (d *Driver) GetSSHHostname() (string, error) { return d.GetIP() }

// GetURL returns the Docker URL rancher-machine expects, tcp://<ip>:2376.
func (d *Driver) GetURL() (string, error) {
	if err := drivers.MustBeRunning(d); err != nil {
		return "", err
	}
	ip, err := d.GetIP()
	if err != nil {
		return "", err
	}
	return "tcp://" + net.JoinHostPort(ip, "2376"), nil
}

// GetCreateFlags lists the driver's flags. It is static: Rancher calls it to build its UI schema, without
// credentials, and rancher-machine calls it from a throw-away plugin to learn the flag set.
func (d *Driver) GetCreateFlags() []mcnflag.Flag {
	return config.CreateFlags()
}
