package harvester

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// checkTimeout bounds PreCreateCheck: it makes a handful of reads.
const checkTimeout = 2 * time.Minute

// errNoConfig is returned when a method that needs the machine's flags runs without them.
var errNoConfig = errors.New("the driver has no machine configuration: SetConfigFromFlags must run first")

// PreCreateCheck checks the machine's objects — the VM with --harvester-vm-patch applied, its claims, the plan of
// its static addresses, as SetConfigFromFlags built them — against the live cluster and creates nothing: the
// credential works and may create what a create creates, the namespace exists, the VM name is free, every image
// exists, is fully imported and is a cloud image, storage classes, networks and the key pairs exist, the machine
// fits the namespace's resource quotas, host devices can be passed through (harvester/preflight). Every problem is
// reported at once; an API failure is reported as what it is, never as "does not exist". What it found — the
// machine completed with what it read — is what Create sends (Driver.checked).
func (d *Driver) PreCreateCheck() (err error) {
	defer d.named(&err)
	return d.preCreateCheck()
}

// preCreateCheck is PreCreateCheck, its errors in the canonical flag names.
func (d *Driver) preCreateCheck() error {
	if d.cfg == nil {
		return errNoConfig
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	found := d.preflight(ctx, nil)
	if err := found.Err(); err != nil {
		return err
	}
	if found.Machine == nil { // every check passed, so it read what the machine needs
		return errors.New("the pre-flight passed but did not complete the machine's objects")
	}
	d.checked = found.Machine
	logging.Debugf("Harvester accepts VM %s/%s", d.cfg.Namespace, d.cfg.MachineName)
	return nil
}

// preflight runs the pre-flight of the machine (preflight.Run), with admission when the check verb asks for it.
// The create's draws are made first: its id goes into the state rancher-machine saves right after
// PreCreateCheck, before Create, so that a later rm knows the machine's VM even if the create dies before the VM's
// UID is saved; its claims' suffix into the completed machine.
func (d *Driver) preflight(ctx context.Context, admission *preflight.Admission) preflight.Result {
	d.ensureCreateID()
	if d.claimSuffix == "" {
		d.claimSuffix = randomSuffix()
	}
	c, err := d.api()
	if err != nil {
		return preflight.Result{Checks: []preflight.Check{preflight.Failed(preflight.CheckCredential, config.FlagKubeconfigContent, err)}, Draft: d.draft}
	}
	return preflight.Run(ctx, c, preflight.Input{Machine: d.draft, Draw: objects.Draw{ClaimSuffix: d.claimSuffix, CreateID: d.CreateID},
		Machines: d.machines, Needed: d.neededAccess(), CredentialExpiry: d.credentialExpiry, Admission: admission})
}

// PreflightPool runs a create's pre-flight (PreCreateCheck) for machines machines of the configuration of machine
// machineName given by opts (the flags and environment of a create, see config.ParseArgs), as a machine pool of
// that quantity creates them — the quota must hold all of them, the hosts must have their vGPUs and host devices
// free, and the IP pool an address for each —, then asks the cluster's admission about the create's objects
// (preflight.CheckAdmission, which PreCreateCheck does not). It returns what the pre-flight found: every check, in
// order, and the machine as they judged it, from one parse of opts. It creates and changes nothing: it only reads,
// asks the API server what the credential may do (SelfSubject*Reviews, which store nothing) and sends the Secret
// and the VM as dry runs (stored neither). machines is 1 to preflight.MaxPoolSize. An invalid configuration is the
// error, a *config.ConfigError; a credential that cannot be used is the result's one check.
func PreflightPool(ctx context.Context, machineName string, opts config.Options, machines int) (preflight.Result, error) {
	if machines < 1 || machines > preflight.MaxPoolSize {
		return preflight.Result{}, fmt.Errorf("the number of machines to check must be 1 to %d, got %d", preflight.MaxPoolSize, machines)
	}
	d := NewDriver(machineName, "")
	d.machines = machines
	if err := d.SetConfigFromFlags(opts); err != nil {
		return preflight.Result{}, err
	}
	if d.credentialErr != nil && d.kubeconfig == nil {
		return preflight.Result{Checks: []preflight.Check{preflight.Failed(preflight.CheckCredential, config.FlagKubeconfigContent, d.credentialErr)}, Draft: d.draft}, nil
	}
	// The dry runs stand in for the SSH key a create makes with a new one of its kind (or the user's), dropped.
	_, public, err := d.machineKey()
	if err != nil {
		return preflight.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return d.preflight(ctx, &preflight.Admission{SSHKey: public}), nil
}

// neededAccess is what a create, the readiness watch and a later remove need in the machine's namespace; each
// list is declared beside the calls that need it.
func (d *Driver) neededAccess() []kube.Access {
	needed := slices.Concat(createAccess, kube.WatchMachineAccess, removeAccess)
	if d.cfg.CloudProvider.Generate {
		needed = slices.Concat(needed, guestaccount.Access)
	}
	return needed
}
