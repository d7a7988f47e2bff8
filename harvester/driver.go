// Package harvester is the Harvester node driver: a rancher/machine driver that runs each machine as a KubeVirt
// VirtualMachine on a Harvester cluster.
//
// It is the lifecycle rancher-machine calls (PreCreateCheck, Create, state, power, Remove), on top of the
// driver's other packages: harvester/config turns flag values into a validated Config without touching the
// network, harvester/objects builds the machine's API objects from it once (pure), harvester/preflight judges those
// objects against the cluster and completes them with what it reads, harvester/connection turns the credential
// into a client, harvester/ippool allocates static addresses and harvester/guestaccount makes the guest cluster's
// cloud-provider account. It sends the objects the pre-flight judged through harvester/internal/kube, the only code
// that talks to the API server. layers_test.go holds every package to the imports its floor allows.
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
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/internal/version"
)

// DriverName is the name rancher-machine and Rancher know this driver by. Another name would lose Rancher's
// Harvester UI form, cloud credential type and cluster-name flag; the same binary answers to one when installed
// under it (see identity.go).
const DriverName = identity.Canonical

// Driver is one machine. Its exported fields are persisted by rancher-machine as JSON in the machine store (and
// by Rancher in the machine-state Secret), so they hold only what later commands need to find the machine again;
// passwords and user data stay in memory. VMNamespace and ClusterName keep the reference driver's JSON names so
// machines it created can still be removed after an upgrade. The one credential ever saved is the one a
// rancher-machine or docker-machine user gave on the command line, never one from the environment (Rancher's way):
// see savedState.
type Driver struct {
	*drivers.BaseDriver

	VMNamespace string
	ClusterName string
	// DriverVersion is the driver version that created the machine, for diagnostics.
	DriverVersion string
	// IPPoolNetwork is namespace/name of the network whose --harvester-ip-pool the machine's address comes from:
	// Remove releases the address there. "" without a pool.
	IPPoolNetwork string `json:",omitempty"`
	// IPLeasePool is namespace/name of the IPPool of Harvester's managed DHCP the machine's address is leased from
	// (--harvester-ip-pool-name): Remove waits until the lease is released. "" without one.
	IPLeasePool string `json:",omitempty"`
	// VMUID is the UID of the VM this machine's create made, recorded the moment the VM exists, so the state
	// rancher-machine saves after Create carries it. Remove and the power commands act on that VM only (see
	// ownership.go). "" for machines of the reference driver or of earlier versions of this one.
	VMUID string `json:",omitempty"`
	// CreateID is the random id of the machine's create, chosen before rancher-machine first saves the state
	// and written on the VM and its cloud-init Secret (config.AnnotationCreateID): it identifies them when a
	// create died before the state could record VMUID.
	CreateID string `json:",omitempty"`

	// id is the name this copy of the plugin answers to (see identity.go); the zero value is "harvester".
	id  identity.Identity
	cfg *config.Config // set by SetConfigFromFlags, used by PreCreateCheck and Create in the same process
	// draft is the machine's objects as SetConfigFromFlags built them, with placeholders for what the pre-flight
	// reads (objects.Machine).
	draft      *objects.Machine
	kubeconfig []byte // the Harvester credential: flags, environment, or the machine's saved state
	// storedCredential is the credential saved with the machine (MarshalJSON, see savedState): one given on the
	// command line, or the one the machine's saved state carries until a credential is given again. "" for none.
	storedCredential string
	// credentialErr is why the credential given to this process could not be used; reported when the cluster is
	// first needed, since UnmarshalJSON must not fail a machine's loading.
	credentialErr error
	clients       kube.Interface // built on first use (api); tests set fakes
	heldIn        kube.Interface // the client whose screen holds the configuration's secrets (holdSecrets)
	// token tells when the credential's token expires (connection.Token, set with clients); nil: nothing is known.
	token expiryReader
	// checked is the machine as PreCreateCheck completed it with what it read, and judged: Create sends it. It
	// holds what the data Secrets hold: never logged or persisted.
	checked *objects.Machine
	// claimSuffix makes the claims of this machine's create unique: drawn once, before the pre-flight.
	claimSuffix string
	// created is the machine's VM and VMI as the create's wait last saw them (running with an address), and when:
	// the first GetState and the first address asked after the create answer from it (see fromCreate).
	created *seenAt
	// machines is how many machines of this configuration the pre-flight checks at once (PreflightPool, a
	// pool's quantity); 0 means one.
	machines int
}

// seenAt is a snapshot and the time it was current.
type seenAt struct {
	snapshot
	at    time.Time
	asked uint8 // the questions it has answered (see fromCreate)
}

// NewDriver returns a driver for machine hostName whose store lives under storePath.
func NewDriver(hostName, storePath string) *Driver {
	return &Driver{BaseDriver: &drivers.BaseDriver{MachineName: hostName, StorePath: storePath}}
}

// DriverName returns "harvester", or the second name the plugin runs under (see identity.go).
func (d *Driver) DriverName() string { return d.id.Name() }

// SetConfigFromFlags parses and validates every flag (see ParseConfig). It reads no cluster. A credential given
// as the create flag is kept with the machine (see savedState); one from the environment is not.
func (d *Driver) SetConfigFromFlags(given drivers.DriverOptions) error {
	opts := d.id.Options(given)
	cfg, machine, err := objects.ParseConfig(d.MachineName, opts)
	if err != nil {
		return d.id.Err(err)
	}
	d.cfg, d.draft = cfg, machine
	d.VMNamespace = cfg.Namespace
	d.ClusterName = cfg.ClusterName
	d.IPPoolNetwork = config.IPPoolNetwork(cfg)
	d.IPLeasePool = ""
	if cfg.LeasePool != nil {
		d.IPLeasePool = cfg.LeasePool.String()
	}
	d.SSHUser = cfg.SSH.User
	d.SSHPort = cfg.SSH.Port
	d.DriverVersion = version.Version
	if cfg.Kubeconfig != nil {
		// rancher-machine's own parse of the command line wins over UnmarshalJSON's (see givenInEnvironment).
		d.kubeconfig, d.credentialErr = cfg.Kubeconfig, nil
		d.storedCredential = d.credentialToSave(opts.String(config.FlagKubeconfigContent), cfg.Kubeconfig)
	}
	return nil
}

// UnmarshalJSON loads a machine's persisted state, with the credential saved with it, and then reloads the
// credential from this process's command line and environment (--harvester-kubeconfig-content /
// HARVESTER_KUBECONFIG_CONTENT, or the second name's), so a credential rotated since the machine was created is used instead of a
// stale one — `rm --update-config` relies on it. rancher-machine starts its plugin with its own arguments, so
// os.Args is the rancher-machine command line. It must stay cheap and offline: rancher-machine calls it on every
// plugin start.
func (d *Driver) UnmarshalJSON(data []byte) error {
	type persisted Driver // same fields, no UnmarshalJSON method
	p := persisted(*d)
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("cannot read the machine's saved driver state: %w", err)
	}
	*d = Driver(p)

	var saved savedState
	if json.Unmarshal(data, &saved) == nil && saved.KubeConfigContent != "" {
		d.storedCredential = saved.KubeConfigContent
		kc, err := config.DecodeKubeconfig(saved.KubeConfigContent)
		d.kubeconfig, d.credentialErr = kc, nil
		if err != nil {
			d.credentialErr = d.id.Err(fmt.Errorf("the Harvester credential saved with this machine %v; pass a current one with --%s or $%s",
				err, config.FlagKubeconfigContent, config.EnvVar(config.FlagKubeconfigContent)))
		}
	}
	flag := d.id.Flag(config.FlagKubeconfigContent)
	opts := rpcdriver.GetDriverOpts(d.GetCreateFlags(), os.Args)
	if _, ok := opts.Values[flag]; ok {
		var p config.Problems
		raw := opts.String(flag)
		if kc := config.ParseKubeconfig(&p, raw); kc != nil {
			// A credential given again replaces the saved one, in memory and in the state saved next: saved in
			// its place when given on the command line, dropped when it came from the environment.
			d.kubeconfig, d.credentialErr = kc, nil
			d.storedCredential = d.credentialToSave(raw, kc)
		} else if err := p.Err(); err != nil {
			d.credentialErr = d.id.Err(fmt.Errorf("%v (from the command line or $%s)", err, config.EnvVar(config.FlagKubeconfigContent)))
		}
	}
	return nil
}

// savedState is the Harvester credential saved with a machine, under the reference driver's JSON name
// (harvester/docker-machine-driver-harvester harvester/harvester.go, its Driver struct), as decoded YAML as the
// reference driver saved it, so either driver reads the other's machines.
//
// It is saved when the credential was given as --harvester-kubeconfig-content on the command line, the way
// docker-machine users pass a driver's credential: rancher-machine's later commands (status, ip, stop, start,
// restart, kill, rm) take no driver flags, so without it they would have no credential and `rm` would leave the VM
// in Harvester. Every docker-machine driver keeps what later commands need in the machine store in the same way.
// rancher-machine writes the store's config.json with mode 0600 in a 0700 directory (libmachine/persist
// filestore.go). A credential from $HARVESTER_KUBECONFIG_CONTENT is never saved: that is how Rancher passes its
// cloud credential, and Rancher copies the machine store into its machine-state Secret.
//
// A credential given again replaces the saved one: on the command line, it is saved instead; from the
// environment, the saved one is dropped (Rancher passes the cloud credential to every command, so a Rancher
// machine's saved state sheds a credential at its first command). rm removes it with the machine's store.
type savedState struct {
	KubeConfigContent string `json:",omitempty"`
}

// credentialToSave is what the machine's state saves for a credential given to this process as raw (decoded:
// kubeconfig): the kubeconfig when raw came from the command line, "" when it came from the environment.
func (d *Driver) credentialToSave(raw string, kubeconfig []byte) string {
	if givenInEnvironment(d.id.EnvVar(config.FlagKubeconfigContent), raw) {
		return ""
	}
	return string(kubeconfig)
}

// givenInEnvironment reports whether raw, the credential value rancher-machine gave this process, is the
// content of the credential's environment variable env ($HARVESTER_KUBECONFIG_CONTENT, or the second name's).
// rancher-machine fills an absent flag from its environment variable (urfave/cli's EnvVar, unchanged when not
// empty) and starts the plugin with its own environment, so a value equal to the environment's came from there,
// or repeats it; a flag given with any other value overrides the environment and is the user's own.
func givenInEnvironment(env, raw string) bool {
	value := os.Getenv(env)
	return value != "" && value == raw
}

// MarshalJSON saves the machine's state: the exported fields, plus the credential kept with the machine when
// there is one (see savedState).
func (d *Driver) MarshalJSON() ([]byte, error) {
	type persisted Driver // same fields, no MarshalJSON method
	return json.Marshal(struct {
		*persisted
		savedState
	}{(*persisted)(d), savedState{KubeConfigContent: d.storedCredential}})
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

// GetCreateFlags lists the driver's flags, named after the driver (see identity.go). It is static: Rancher calls
// it to build its UI schema, without credentials, and rancher-machine calls it from a throw-away plugin to learn
// the flag set.
func (d *Driver) GetCreateFlags() []mcnflag.Flag {
	return d.id.Flags(config.CreateFlags())
}
