package harvester

import (
	"context"
	"fmt"
	"time"

	"github.com/rancher/machine/libmachine/state"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// readTimeout bounds the single reads behind GetState, GetIP and GetIPv6.
const readTimeout = 30 * time.Second

// createdFresh is how long after a create GetState and GetIP trust what the create's watch saw last.
const createdFresh = 10 * time.Second

// namespace is the machine's namespace: from its flags, or its saved state (the reference driver's default when
// a very old state has none).
func (d *Driver) namespace() string {
	if d.VMNamespace != "" {
		return d.VMNamespace
	}
	return config.DefaultVMNamespace
}

// machine names the machine's VM.
func (d *Driver) machine() config.Ref {
	return config.Ref{Namespace: d.namespace(), Name: d.MachineName}
}

// observe reads the machine's VM and VMI once. A missing VM or VMI is a nil field, not an error; a VM of the
// machine's name that is not the machine's (see ownership.go) is an error saying so.
func (d *Driver) observe(ctx context.Context) (snapshot, kube.Interface, error) {
	c, err := d.api()
	if err != nil {
		return snapshot{}, nil, err
	}
	ns, name := d.namespace(), d.MachineName
	var s snapshot
	vm, err := c.VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && !d.ownsVM(vm):
		return s, c, d.checkOwnVM(vm)
	case err == nil:
		s.VM = vm
	case kube.IsGone(err, "virtualmachines", name):
		return s, c, nil
	default:
		return s, c, c.Explain("read VM", ns+"/"+name, err)
	}
	vmi, err := c.VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		s.VMI = vmi
	case !kube.IsGone(err, "virtualmachineinstances", name):
		return s, c, c.Explain("read VMI", ns+"/"+name, err)
	}
	return s, c, nil
}

// fromCreate returns what the create's watch saw last, to answer question (askedState or askedAddress) without a
// request: each question once, within createdFresh of a successful Create in the same process, and before any
// power command or remove. Reading the VM and VMI again would tell the same; a second asking reads.
func (d *Driver) fromCreate(question uint8) (snapshot, bool) {
	s := d.created
	if s == nil || s.asked&question != 0 {
		return snapshot{}, false
	}
	s.asked |= question
	if age := time.Since(s.at); age < 0 || age >= createdFresh {
		d.created = nil
		return snapshot{}, false
	}
	return s.snapshot, true
}

// The questions fromCreate answers once each.
const (
	askedState uint8 = 1 << iota
	askedAddress
)

// GetState reports the machine's state from its VM's printableStatus and its VMI's phase. A VM that does not
// exist is an error saying so in the words rancher-machine treats as "gone".
//
// The first call right after a Create in the same process (rancher-machine's wait for "Running", which comes
// right after Create) answers from the VM and VMI the create's watch saw last (see fromCreate).
func (d *Driver) GetState() (st state.State, err error) {
	defer d.named(&err)
	if s, ok := d.fromCreate(askedState); ok {
		return machineState(s), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	s, _, err := d.observe(ctx)
	if err != nil {
		return state.Error, err
	}
	if s.VM == nil {
		return state.None, d.errNoVM()
	}
	return machineState(s), nil
}

// GetIP returns the IPv4 address of the machine's first NIC, read live from its VMI (DHCP may change it), but
// for the first address asked right after a Create in the same process (see fromCreate).
func (d *Driver) GetIP() (ip string, err error) {
	defer d.named(&err)
	v4, _, err := d.addresses()
	if err == nil && v4 == "" {
		err = fmt.Errorf("VM %s/%s has no IPv4 address on %s (yet); see GetIPv6 for an IPv6 one", d.namespace(), d.MachineName, config.PrimaryNIC)
	}
	return v4, err
}

// GetIPv6 returns the global IPv6 address of the machine's first NIC.
func (d *Driver) GetIPv6() (ip string, err error) {
	defer d.named(&err)
	_, v6, err := d.addresses()
	if err == nil && v6 == "" {
		err = fmt.Errorf("VM %s/%s has no global IPv6 address on %s (yet)", d.namespace(), d.MachineName, config.PrimaryNIC)
	}
	return v6, err
}

// addresses returns the addresses of the machine's first NIC. A machine that recorded its VM's UID reads its
// VMI alone: KubeVirt makes a VM's VMI with a controller reference to it (kubevirt.io/kubevirt v1.9.0
// pkg/virt-controller/watch/vm/vm.go, setupVMIFromVM), so the VMI names the VM it belongs to. Without a recorded
// UID, without a VMI, or with the VMI of another VM, it reads the VM too, which says which of them it is.
func (d *Driver) addresses() (ipv4, ipv6 string, err error) {
	if s, ok := d.fromCreate(askedAddress); ok && s.VMI != nil {
		ipv4, ipv6 = nicAddresses(s.VMI, config.PrimaryNIC)
		return ipv4, ipv6, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	switch vmi, err := d.ownVMI(ctx); {
	case err != nil:
		return "", "", err
	case vmi != nil:
		ipv4, ipv6 = nicAddresses(vmi, config.PrimaryNIC)
		return ipv4, ipv6, nil
	}
	s, _, err := d.observeVM(ctx)
	switch {
	case err != nil:
		return "", "", err
	case s.VMI == nil:
		return "", "", fmt.Errorf("VM %s/%s is not running", d.namespace(), d.MachineName)
	}
	ipv4, ipv6 = nicAddresses(s.VMI, config.PrimaryNIC)
	return ipv4, ipv6, nil
}

// ownVMI reads the machine's VMI when the machine recorded its VM's UID, and returns it when that VM controls it;
// nil, and no error, when the VMI is absent or not the recorded VM's, or when no UID is recorded.
func (d *Driver) ownVMI(ctx context.Context) (*kubevirtv1.VirtualMachineInstance, error) {
	if d.VMUID == "" {
		return nil, nil
	}
	c, err := d.api()
	if err != nil {
		return nil, err
	}
	vmi, err := getNamed(ctx, c, d, "virtualmachineinstances", "VMI", c.VirtualMachineInstances(d.namespace()).Get)
	if vmi == nil || err != nil {
		return nil, err
	}
	if owner := metav1.GetControllerOf(vmi); owner == nil || string(owner.UID) != d.VMUID {
		return nil, nil
	}
	return vmi, nil
}
