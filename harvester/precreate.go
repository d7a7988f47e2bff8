package harvester

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/ippool"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// checkTimeout bounds PreCreateCheck: it makes a handful of reads.
const checkTimeout = 2 * time.Minute

// errNoConfig is returned when a method that needs the machine's flags runs without them.
var errNoConfig = errors.New("the driver has no machine configuration: SetConfigFromFlags must run first")

// PreCreateCheck checks the configuration against the live cluster and creates nothing: the credential works and
// may create what a create creates, the namespace exists, the VM name is free, every image exists, is fully
// imported and is a cloud image, storage classes, networks and the key pairs (--harvester-key-pair-name,
// --harvester-ssh-keypairs) exist, the machine fits the namespace's resource quotas, host devices can be passed
// through. Every problem is reported at once; an API failure is reported as what it is, never as "does not
// exist". It is the checks of preflight, as one error.
func (d *Driver) PreCreateCheck() (err error) {
	defer d.named(&err)
	if d.cfg == nil {
		return errNoConfig
	}
	// The create's id goes into the state rancher-machine saves right after this check, before Create: with it a
	// later rm knows the machine's VM even if the create dies before the VM's UID is saved.
	d.ensureCreateID()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	var p config.Problems
	for _, check := range d.preflight(ctx) {
		if check.err != nil {
			return check.err
		}
		p.List = append(p.List, check.Problems...)
	}
	if err := p.ErrTitled("cannot create the machine on Harvester"); err != nil {
		return err
	}
	logging.Debugf("Harvester accepts VM %s/%s", d.cfg.Namespace, d.cfg.MachineName)
	return nil
}

// Check is one pre-flight check and what it found: it passed when Problems is empty and Skipped is "".
type Check struct {
	Name string
	// Detail is what a passed check saw worth telling ("" for nothing).
	Detail string
	// Skipped says why the check, or part of it, was not made: it depends on one that failed, nothing is
	// configured for it, or the credential may not make a read it needs (the unchecked parts, "; "-joined).
	Skipped  string
	Problems []config.Problem
	// err ends the pre-flight: a failure that makes every further check pointless (the credential is refused,
	// Harvester cannot be reached). It is also in Problems.
	err error
}

// Lines is how the check verb prints c: a "problem" line for each problem, a "skipped" line with why, or an "ok"
// line with what it saw. A check is ok only when it found nothing wrong and looked at everything: a part the
// credential may not read is "skipped" with why, also beside the problems another part found. word rewrites each
// text (the flag names under the driver's name); each reason is kept on its line.
func (c Check) Lines(word func(string) string) []string {
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var lines []string
	for _, p := range c.Problems {
		lines = append(lines, fmt.Sprintf("problem  %-20s  %s", c.Name, word(oneLine(p.String()))))
	}
	if c.Skipped != "" {
		lines = append(lines, fmt.Sprintf("skipped  %-20s  %s", c.Name, word(oneLine(c.Skipped))))
	}
	if len(c.Problems) == 0 && c.Skipped == "" {
		lines = append(lines, strings.TrimRight(fmt.Sprintf("ok       %-20s  %s", c.Name, word(c.Detail)), " "))
	}
	return lines
}

// The names of the pre-flight's checks: their lines in the check verb's output, in the order of the table
// (preflightChecks).
const (
	CheckCredential     = "credential"
	CheckNamespace      = "namespace"
	CheckPermissions    = "permissions"
	CheckMachineName    = "machine name"
	CheckImagesKeyPairs = "images and key pairs"
	CheckStorageClasses = "storage classes"
	CheckNetworks       = "networks"
	CheckDataSecrets    = "data Secrets"     // --harvester-user-data-secret, --harvester-network-data-secret
	CheckVMPatchObjects = "VM patch objects" // the Secrets, ConfigMaps and ServiceAccounts --harvester-vm-patch gives the guest
	CheckQuota          = "quota"
	CheckZones          = "zones and regions"
	CheckHostDevices    = "host devices" // and their free capacity
	CheckIPPool         = "IP pool"
	CheckLBPools        = "load-balancer pools" // --harvester-ip-pool against Harvester's load-balancer IP pools
	// CheckAdmission is the check verb's own, after the pre-flight's (checkVerbChecks): the cluster's admission
	// judges the create's Secret and VM in a dry run.
	CheckAdmission = "admission"
)

// Preflight runs a create's pre-flight (PreCreateCheck) for machine machineName configured by opts (the flags and
// environment of a create, see config.ParseArgs), then asks the cluster's admission about the create's objects
// (CheckAdmission, which PreCreateCheck does not), and returns every check, in order, creating and changing
// nothing: it only reads, asks the API server what the credential may do (SelfSubject*Reviews, which store
// nothing) and sends the Secret and the VM as dry runs (stored neither). An invalid configuration is the error, a
// *config.ConfigError.
func Preflight(ctx context.Context, machineName string, opts config.Options) ([]Check, error) {
	return PreflightPool(ctx, machineName, opts, 1)
}

// PreflightPool is Preflight for machines machines of this configuration at once, as a machine pool of that
// quantity creates them (see precreate_count.go): the quota must hold all of them, the hosts must have their
// vGPUs and host devices free, and the IP pool an address for each. machines is 1 to MaxPoolSize.
func PreflightPool(ctx context.Context, machineName string, opts config.Options, machines int) ([]Check, error) {
	if machines < 1 || machines > MaxPoolSize {
		return nil, fmt.Errorf("the number of machines to check must be 1 to %d, got %d", MaxPoolSize, machines)
	}
	d := NewDriver(machineName, "")
	d.machines = machines
	if err := d.SetConfigFromFlags(opts); err != nil {
		return nil, err
	}
	if d.credentialErr != nil && d.kubeconfig == nil {
		return []Check{failed(CheckCredential, config.FlagKubeconfigContent, d.credentialErr)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return d.preflight(ctx, checkVerbChecks...), nil
}

// failed is a check that ended the pre-flight with err.
func failed(name, flag string, err error) Check {
	return Check{Name: name, Problems: []config.Problem{{Flag: flag, Message: config.Redact(err.Error())}}, err: err}
}

// preflightChecks is the pre-flight, one row a check in the order the check verb prints them (see
// preflightCheck). They read different things, so they run at once: the pre-flight takes about as long as its
// longest chain of reads, not the sum of them. Adding a check is adding a row and its function.
var preflightChecks = []preflightCheck{
	{name: CheckCredential, run: checkCredential, opens: true},
	{name: CheckNamespace, needs: []string{CheckCredential}, run: checkNamespace},
	{name: CheckPermissions, needs: []string{CheckNamespace}, run: checkAccess},
	{name: CheckMachineName, needs: []string{CheckNamespace}, run: checkNameFree},
	{name: CheckImagesKeyPairs, run: checkImagesKeyPairs},
	{name: CheckStorageClasses, needs: []string{CheckImagesKeyPairs}, run: checkStorageClasses},
	{name: CheckNetworks, run: checkNetworks},
	{name: CheckDataSecrets, flags: []string{config.FlagUserDataSecret, config.FlagNetworkDataSecret}, given: dataSecretsGiven,
		needs: []string{CheckNamespace}, run: checkDataSecrets},
	{name: CheckVMPatchObjects, flags: []string{config.FlagVMPatch}, given: vmPatchGiven, needs: []string{CheckNamespace}, run: checkVMPatchObjects},
	{name: CheckQuota, needs: []string{CheckImagesKeyPairs}, run: checkQuota},
	{name: CheckZones, flags: []string{config.FlagZone, config.FlagRegion}, given: zonesGiven, run: checkTopology},
	{name: CheckHostDevices, flags: []string{config.FlagHostDeviceInfo, config.FlagVGPUInfo}, given: devicesGiven, run: checkDevices},
	{name: CheckIPPool, flags: poolFlags, given: anyPoolGiven, run: checkIPPool},
	{name: CheckLBPools, flags: poolFlags, given: anyPoolGiven, needs: []string{CheckIPPool}, run: checkLBPools},
}

// preflight makes the checks of PreCreateCheck (preflightChecks), then those of more; a check with err set is
// the last. The images' lookup, what the data Secrets hold and the VM patch's objects allowed are kept for Create.
func (d *Driver) preflight(ctx context.Context, more ...preflightCheck) []Check {
	c, err := d.api()
	if err != nil {
		return []Check{failed(CheckCredential, config.FlagKubeconfigContent, err)}
	}
	logging.Infof("Checking Harvester (%s) for VM %s/%s", c.Server(), d.cfg.Namespace, d.cfg.MachineName)
	checks, found := runChecks(ctx, slices.Concat(preflightChecks, more), d, c)
	if looked, ok := found[CheckImagesKeyPairs].(*lookups); ok {
		d.looked = looked
	}
	if data, ok := found[CheckDataSecrets].(*dataSecrets); ok {
		d.dataSecrets = data
	}
	if allowed, ok := found[CheckVMPatchObjects].(map[string]bool); ok {
		d.patchObjects = allowed
	}
	return checks
}

// checkIPPool makes sure the static-address pool has an address for each machine (ippool.Check).
// What it finds are the addresses a create would take (nil for none), for the admission's dry run.
func checkIPPool(ctx context.Context, r *checkRun) {
	if r.cfg.LeasePool != nil {
		checkLeasePool(ctx, r) // --harvester-ip-pool-name (precreate_leasepool.go)
		return
	}
	r.findings = ippool.Check(ctx, r.c, r.cfg, r.machineCount(), &r.p)
}

// checkCredential reads the machine's namespace: the first read proves the credential. When it fails for any
// reason but absence or a forbidden read, nothing else would work either, so that one error is the whole answer
// (what the other checks found is dropped). What the read found is the namespace check's.
func checkCredential(ctx context.Context, r *checkRun) {
	ns := r.cfg.Namespace
	_, err := kube.GetCached(ctx, r.c, kube.Namespaces, "", ns)
	if err != nil && !kube.IsGone(err, "namespaces", ns) && !apierrors.IsForbidden(err) {
		r.fail(config.FlagKubeconfigContent, r.c.Explain("read namespace", ns, err))
		return
	}
	r.detail = credentialDetail(r.credentialExpiry(ctx), time.Now())
	r.findings = err
}

// checkNamespace tells what the credential check's read of the namespace found. The checks that need it are
// skipped when the namespace does not exist.
func checkNamespace(_ context.Context, r *checkRun) {
	ns := r.cfg.Namespace
	r.detail = ns
	switch err, _ := r.findingsOf(CheckCredential).(error); {
	case err == nil:
	case apierrors.IsForbidden(err):
		// Users scoped to a namespace may not read namespaces; the permissions check covers them.
		r.u.addf("the credential may not get namespaces: cannot tell whether namespace %s exists", ns)
	default: // absent: checkCredential ends the pre-flight on any other failure
		r.p.Addf(config.FlagVMNamespace, "namespace %s does not exist in Harvester", ns)
		r.blocks = "namespace " + ns + " does not exist"
	}
}

// checkImagesKeyPairs looks up the images and key pairs (lookUpImages); the lookups are what it finds, for the
// checks of the images' storage classes. A failure other than a refused configuration ends the pre-flight.
func checkImagesKeyPairs(ctx context.Context, r *checkRun) {
	looked := r.looked // found by an earlier pre-flight of this driver
	var err error
	if looked == nil {
		looked, err = lookUpImages(ctx, r.c, r.cfg)
	}
	var cerr *config.ConfigError
	switch {
	case err == nil:
		r.findings = looked
	case errors.As(err, &cerr):
		r.p.List = cerr.Problems
	default:
		r.fail("", err)
	}
}

// foundLookups is what the images' check found: nil when an image or a key pair could not be used.
func foundLookups(r *checkRun) *lookups {
	looked, _ := r.findingsOf(CheckImagesKeyPairs).(*lookups)
	return looked
}

// unchecked collects why parts of a check were not made: a read the credential may not make (or that failed
// where failing blocks nothing). They block nothing — PreCreateCheck logs them at debug level — but the check
// verb prints them as "skipped", never "ok": what was not looked at was not found fine.
type unchecked []string

func (u *unchecked) addf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	logging.Debugf("Not checked: %s", msg)
	*u = append(*u, msg)
}

func (u unchecked) String() string { return strings.Join(u, "; ") }

// credentialDetail says when a working credential's token expires, with the create's warning when that is soon.
func credentialDetail(e connection.Expiry, now time.Time) string {
	if w := connection.ExpiryWarning(e, now); w != "" {
		return w
	}
	if e.At.IsZero() {
		return "accepted by Harvester"
	}
	return fmt.Sprintf("accepted by Harvester; its token expires at %s, in %s", e.At.Format(time.RFC3339), connection.RoundDuration(e.At.Sub(now)))
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

// checkAccess asks the API server whether the credential may do what the machine's life needs in its namespace.
// What it finds is what the credential may not do (accessDenied), nil when the review failed.
func checkAccess(ctx context.Context, r *checkRun) {
	denied, err := r.c.Denied(ctx, r.cfg.Namespace, r.neededAccess())
	if err == nil {
		r.findings = accessDenied(denied)
	}
	switch {
	case err != nil:
		r.p.Addf(config.FlagKubeconfigContent, "%v", r.c.Explain("check the credential's permissions in namespace", r.cfg.Namespace, err))
	case len(denied) > 0:
		what := make([]string, len(denied))
		for i, a := range denied {
			what[i] = a.String()
		}
		r.p.Addf(config.FlagKubeconfigContent, "the credential may not %s in namespace %s; ask for a Harvester role that allows managing VMs there",
			lists.Join(what, "and"), r.cfg.Namespace)
	}
}

// checkNameFree makes sure neither the VM nor its cloud-init Secret exists already, as Create will: even a
// Secret this driver left behind without its VM is in the way (see secretExists).
func checkNameFree(ctx context.Context, r *checkRun) {
	cfg := r.cfg
	var vmTaken config.Problems // the two reads run at once; the VM's problem is told first
	var read sync.WaitGroup
	read.Go(func() {
		vm, err := r.c.VirtualMachines(cfg.Namespace).Get(ctx, cfg.MachineName, metav1.GetOptions{ResourceVersion: kube.FromCache})
		switch {
		case err == nil:
			vmTaken.Addf("", "a VirtualMachine named %s already exists in namespace %s (created by %s); choose another machine name or remove that VM",
				cfg.MachineName, cfg.Namespace, creatorOf(vm.Labels))
		case !kube.IsGone(err, "virtualmachines", cfg.MachineName):
			vmTaken.Addf("", "%v", r.c.Explain("check whether VM", cfg.Namespace+"/"+cfg.MachineName+" exists", err))
		}
	})
	name := objects.CloudInitSecretName(cfg.MachineName)
	secret, err := kube.GetCached(ctx, r.c, kube.Secrets, cfg.Namespace, name)
	read.Wait()
	r.p.List = append(r.p.List, vmTaken.List...)
	switch {
	case err == nil:
		r.p.Addf("", "%s", secretInTheWay(cfg.Namespace, name, cfg.MachineName, secret))
	case err != nil && !kube.IsGone(err, "secrets", name):
		r.p.Addf("", "%v", r.c.Explain("check whether Secret", cfg.Namespace+"/"+name+" exists", err))
	}
}

// checkStorageClasses makes sure every disk's storage class exists. Users who may not read storage classes
// (they are cluster-scoped) are not blocked: Harvester will tell at create time. The images' classes are known
// once their lookup ends; the storage classes are listed at once, not read one by one once the images name
// theirs: one request either way, and the pre-flight does not wait for two reads in a row. A credential that may
// not list them reads each by name.
func checkStorageClasses(ctx context.Context, r *checkRun) {
	listed := listStorageClasses(ctx, r.c)
	looked := foundLookups(r)
	seen := map[string]bool{}
	for _, disk := range r.cfg.Disks {
		class, known := diskStorageClass(disk, looked)
		if !known {
			if !seen["image "+disk.Image.String()] {
				seen["image "+disk.Image.String()] = true
				r.u.addf("%s: the storage class of image %s is not known, the image could not be used", disk.Name, disk.Image)
			}
			continue
		}
		if class == "" || seen[class] {
			continue
		}
		seen[class] = true
		if listed != nil {
			if !listed[class] {
				r.p.Addf(disk.Flag, "%s: storage class %s does not exist in Harvester", disk.Name, class)
			}
			continue
		}
		_, err := kube.GetCached(ctx, r.c, kube.StorageClasses, "", class)
		switch {
		case err == nil:
		case kube.IsGone(err, "storageclasses", class):
			r.p.Addf(disk.Flag, "%s: storage class %s does not exist in Harvester", disk.Name, class)
		case apierrors.IsForbidden(err):
			r.u.addf("the credential may not get storageclasses: cannot tell whether storage class %s exists", class)
		default:
			r.p.Addf(disk.Flag, "%v", r.c.Explain("read storage class", class, err))
		}
	}
}

// listStorageClasses lists every storage class, or returns nil when it cannot.
func listStorageClasses(ctx context.Context, c kube.Interface) map[string]bool {
	list, err := kube.List(ctx, c, kube.StorageClasses, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	if err != nil {
		logging.Debugf("Cannot list storage classes (%s); reading each by name", errWording(err))
		return nil
	}
	classes := map[string]bool{}
	for _, sc := range list {
		classes[sc.Name] = true
	}
	return classes
}

// diskStorageClass is the storage class a disk's volume gets: its own, or its image's as the pre-flight's lookup
// found it. known is false for an image disk when the lookup has not found its image (looked nil).
func diskStorageClass(disk config.Disk, looked *lookups) (class string, known bool) {
	switch {
	case disk.Image == nil:
		return disk.StorageClass, true
	case looked == nil:
		return "", false
	}
	return looked.facts.ImageStorageClasses[*disk.Image], true
}

// checkNetworks makes sure every bridge NIC's network (a NetworkAttachmentDefinition) exists.
func checkNetworks(ctx context.Context, r *checkRun) {
	for _, nic := range r.cfg.NICs {
		if nic.Network == nil {
			continue
		}
		_, err := kube.GetCached(ctx, r.c, kube.Networks, nic.Network.Namespace, nic.Network.Name)
		switch {
		case err == nil:
		case kube.IsMissing(err, nic.Network.Name):
			r.p.Addf(nic.Flag, "%s: network %s does not exist in Harvester (Networks → VM Networks)", nic.Name, nic.Network)
		case apierrors.IsForbidden(err):
			r.u.addf("the credential may not get network-attachment-definitions in namespace %s: cannot tell whether network %s exists",
				nic.Network.Namespace, nic.Network)
		default:
			r.p.Addf(nic.Flag, "%v", r.c.Explain("read network", nic.Network.String(), err))
		}
	}
}

func creatorOf(labels map[string]string) string {
	if v := labels[config.LabelCreator]; v != "" {
		return v
	}
	return "someone else"
}

// isStaleCloudInitSecret reports whether a Secret is this driver's cloud-init Secret for vmName that lost its VM
// (a create that was killed between creating the Secret and the VM).
func isStaleCloudInitSecret(labels map[string]string, owners []metav1.OwnerReference, vmName string) bool {
	return labels[config.LabelCreator] == config.CreatorName && labels[config.LabelVMName] == vmName && len(owners) == 0
}

func zonesGiven(cfg *config.Config) bool { return len(cfg.Zones) > 0 || len(cfg.Regions) > 0 }

// checkTopology makes sure some Harvester host is in one of the requested zones and regions: otherwise the VM
// could never be scheduled and would sit in ErrorUnschedulable. Users who may not list hosts are not blocked.
func checkTopology(ctx context.Context, r *checkRun) {
	cfg := r.cfg
	nodes, err := kube.List(ctx, r.c, kube.Nodes, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		want := cfg.Zones
		if len(want) == 0 {
			want = cfg.Regions
		}
		r.u.addf("the credential may not list nodes: cannot tell whether a Harvester host is in %s%s", lists.Join(want, "or"), topologyAnd(cfg))
		return
	case err != nil:
		r.p.Addf(config.FlagZone, "%v", r.c.Explain("list Harvester hosts to check", "zones and regions", err))
		return
	}
	zones, regions := map[string]bool{}, map[string]bool{}
	for _, n := range nodes {
		zone, region := n.Labels[corev1.LabelTopologyZone], n.Labels[corev1.LabelTopologyRegion]
		zones[zone], regions[region] = true, true
		if inZones(cfg, zone, region) {
			return // one host fits
		}
	}
	flag, want, have := config.FlagZone, cfg.Zones, zones
	if len(cfg.Zones) == 0 {
		flag, want, have = config.FlagRegion, cfg.Regions, regions
	}
	r.p.Addf(flag, "no Harvester host is in %s%s (hosts carry: %s); label the hosts in Harvester (Hosts → Edit Config → Labels) or fix the flag",
		lists.Join(want, "or"), topologyAnd(cfg), lists.Join(labelValues(have), "and"))
}

func topologyAnd(cfg *config.Config) string {
	if len(cfg.Zones) > 0 && len(cfg.Regions) > 0 {
		return " within region " + lists.Join(cfg.Regions, "or")
	}
	return ""
}

// labelValues lists the label values seen, sorted, "(none)" standing for hosts without the label.
func labelValues(seen map[string]bool) []string {
	out := make([]string, 0, len(seen))
	for v := range seen {
		if v == "" {
			v = "(none)"
		}
		out = append(out, v)
	}
	return lists.SortedUnique(out)
}
