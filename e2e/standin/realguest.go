package standin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/guest"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/ownedtemp"
)

// Real guests: a VM (or its namespace) annotated AnnotationGuest=GuestReal runs as a real Linux guest under qemu
// (package guest) instead of a simulated one. Its VMI goes Running when qemu starts; AgentConnected and the
// interfaces come from the real qemu-guest-agent, polled as virt-handler polls it, so without an agent the VMI
// never reports an address. Deleting the VMI powers the guest off (ACPI) within its grace period, or kills it
// when the grace period is 0; a guest that powers itself off ends its VMI (Succeeded). The guest's disk lives as
// long as the VM, like its PVC.
const (
	AnnotationGuest = "e2e.harvesterhci.io/guest"
	GuestReal       = "real"
	// AnnotationGuestSSH is set on the VMI of a real guest: the 127.0.0.1:port forwarded to its SSH port.
	AnnotationGuestSSH = "e2e.harvesterhci.io/ssh"
	// AnnotationGuestConsole is set on the VMI of a real guest: the file its serial console is written to.
	AnnotationGuestConsole = "e2e.harvesterhci.io/console"
	// AnnotationGuestDisk is set on the VMI of a real guest: its disk file, removed when the VM goes.
	AnnotationGuestDisk = "e2e.harvesterhci.io/disk"
	// AnnotationGuestAgent is set on the VMI of a real guest once its agent answered: the version guest-info
	// reported (virt-handler keeps it in the VMI's guestosinfo subresource, which the stand-in does not serve).
	AnnotationGuestAgent = "e2e.harvesterhci.io/guest-agent-version"
)

const (
	agentPollWhileAbsent    = time.Second
	agentPollWhileConnected = 3 * time.Second
	maxGuestGrace           = 2 * time.Minute
)

// realGuests holds the qemu processes of VMIs (by VMI UID) and the disks of VMs (by namespace/name).
type realGuests struct {
	mu      sync.Mutex
	root    string // temporary directory, made on first use
	running map[types.UID]*runningGuest
	disks   map[string]string
	seq     int
}

type runningGuest struct {
	machine  *guest.Machine
	dir      string
	stopping bool
}

func (s *StandIn) wantsRealGuest(vm *kubevirtv1.VirtualMachine) bool {
	v, _ := s.knob(vm, AnnotationGuest)
	return v == GuestReal
}

// bootGuest starts the real guest of upd (a VMI about to run) and marks it Running, or Failed with the reason.
func (s *StandIn) bootGuest(ctx context.Context, upd *kubevirtv1.VirtualMachineInstance) {
	var m *guest.Machine
	var err error
	if g := s.guests.get(upd.UID); g != nil {
		m = g.machine // booted in an earlier round whose VMI update did not land (a conflict): not twice
	} else {
		m, err = s.guests.boot(ctx, s, upd)
	}
	if err != nil {
		s.opts.Logf("standin: vm %s/%s: real guest: %v", upd.Namespace, upd.Name, err)
		setPhase(upd, kubevirtv1.Failed)
		upd.Status.Reason = "GuestBootFailed"
		return
	}
	s.opts.Logf("standin: vm %s/%s: real guest booting (%s), ssh %s, console %s", upd.Namespace, upd.Name, m.Accel, m.SSH, m.Console)
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	upd.Annotations[AnnotationGuestSSH] = m.SSH
	upd.Annotations[AnnotationGuestConsole] = m.Console
	upd.Annotations[AnnotationGuestDisk] = m.Disk
	setPhase(upd, kubevirtv1.Running)
	upd.Status.Conditions = setCondition(upd.Status.Conditions, kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionTrue, "", "")
	upd.Status.Interfaces = interfaces(upd, false, false)
}

// observeGuest updates a running VMI from its real guest: its end, or what its agent reports. It returns when
// to look again.
func (s *StandIn) observeGuest(ctx context.Context, upd *kubevirtv1.VirtualMachineInstance) time.Duration {
	st := &upd.Status
	g := s.guests.get(upd.UID)
	if g == nil {
		setPhase(upd, kubevirtv1.Failed)
		st.Reason = "GuestLost" // the stand-in was restarted: its qemu processes died with it
		return 0
	}
	select {
	case <-g.machine.Done():
		if err := g.machine.Err(); err != nil {
			setPhase(upd, kubevirtv1.Failed)
			st.Reason = "GuestCrashed"
			s.opts.Logf("standin: vm %s/%s: qemu ended: %v", upd.Namespace, upd.Name, err)
		} else {
			setPhase(upd, kubevirtv1.Succeeded) // powered off from inside
		}
		st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, "PodCompleted", "")
		st.Conditions = removeCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected)
		st.Interfaces = nil
		return 0
	default:
	}
	actx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	// Like virt-handler: guest-info tells whether an agent answers (and which), then the interfaces.
	info, err := g.machine.AgentInfo(actx)
	var reported []guest.Interface
	if err == nil {
		reported, err = g.machine.Interfaces(actx)
	}
	if err != nil {
		st.Conditions = removeCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected)
		st.Interfaces = interfaces(upd, false, false)
		return agentPollWhileAbsent
	}
	st.Conditions = setCondition(st.Conditions, kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue, "", "")
	st.Interfaces = agentInterfaces(upd, reported)
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	upd.Annotations[AnnotationGuestAgent] = info.Version
	if st.GuestOSInfo.ID == "" {
		// Once per VMI, as virt-handler fills it on the agent's first answer.
		octx, cancel := context.WithTimeout(ctx, time.Second)
		if osInfo, err := g.machine.OSInfo(octx); err == nil {
			st.GuestOSInfo = guestOSInfo(osInfo)
		}
		cancel()
	}
	return agentPollWhileConnected
}

// guestOSInfo is status.guestOSInfo as virt-handler fills it from guest-get-osinfo.
func guestOSInfo(info guest.OSInfo) kubevirtv1.VirtualMachineInstanceGuestOSInfo {
	return kubevirtv1.VirtualMachineInstanceGuestOSInfo{
		ID: info.ID, Name: info.Name, PrettyName: info.PrettyName, Version: info.Version, VersionID: info.VersionID,
		KernelRelease: info.KernelRelease, KernelVersion: info.KernelVersion, Machine: info.Machine,
	}
}

// agentInterfaces is status.interfaces for the VMI's NICs with what the agent reported for the guest interface of
// the same MAC, as virt-handler merges them: addresses in the agent's order, the first as IP.
func agentInterfaces(vmi *kubevirtv1.VirtualMachineInstance, reported []guest.Interface) []kubevirtv1.VirtualMachineInstanceNetworkInterface {
	out := interfaces(vmi, false, false)
	for i := range out {
		for _, r := range reported {
			if !strings.EqualFold(r.MAC, out[i].MAC) {
				continue
			}
			out[i].InterfaceName = r.Name
			out[i].InfoSource = infoSourceDomainAgent
			for _, a := range r.IPAddresses {
				out[i].IPs = append(out[i].IPs, a.Address)
			}
			if len(out[i].IPs) > 0 {
				out[i].IP = out[i].IPs[0]
			}
		}
	}
	return out
}

// stopRealGuest powers off the guest of a VMI being deleted: ACPI within its grace period (capped), or at once
// when the grace period is 0. It reports whether the guest is gone; until then the caller looks again later.
func (s *StandIn) stopRealGuest(vmi *kubevirtv1.VirtualMachineInstance, grace time.Duration) bool {
	g := s.guests.get(vmi.UID)
	if g == nil {
		return true
	}
	s.guests.mu.Lock()
	first := !g.stopping
	g.stopping = true
	s.guests.mu.Unlock()
	if first {
		s.opts.Logf("standin: vm %s/%s: stopping the real guest (grace %v)", vmi.Namespace, vmi.Name, grace)
		go g.machine.Stop(min(grace, maxGuestGrace))
	}
	select {
	case <-g.machine.Done():
		s.guests.release(vmi.UID)
		return true
	default:
		return false
	}
}

// boot starts qemu for vmi with its seed from the cloud-init Secret the VMI names.
func (r *realGuests) boot(ctx context.Context, s *StandIn, vmi *kubevirtv1.VirtualMachineInstance) (*guest.Machine, error) {
	img, err := guest.FindImage(ctx)
	if err != nil {
		return nil, err
	}
	seed, err := s.seedOf(ctx, vmi)
	if err != nil {
		return nil, err
	}
	var macs []string
	for _, nic := range interfaces(vmi, false, false) {
		macs = append(macs, nic.MAC)
	}
	if len(macs) == 0 {
		return nil, errors.New("the VMI has no network interface")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.root == "" {
		if r.root, err = ownedtemp.Dir("dmdh-guests-"); err != nil {
			return nil, err
		}
	}
	vmKey := vmi.Namespace + "/" + vmi.Name
	disk, ok := r.disks[vmKey]
	if !ok {
		r.seq++
		disk = filepath.Join(r.root, fmt.Sprintf("disk%d.qcow2", r.seq)) // guest.Boot creates it
		r.disks[vmKey] = disk
	}
	// Short paths: qemu's unix sockets live in the boot directory, and a socket path holds at most 107 bytes.
	dir, err := os.MkdirTemp(r.root, "b")
	if err != nil {
		return nil, err
	}
	m, err := guest.Boot(ctx, guest.Spec{Image: img, Disk: disk, Seed: seed, MACs: macs, Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r.running[vmi.UID] = &runningGuest{machine: m, dir: dir}
	return m, nil
}

// seedOf reads the VMI's cloudInitNoCloud volume: user data and network data from their Secrets (keys userdata
// and networkdata, as KubeVirt reads them), or inline.
func (s *StandIn) seedOf(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (guest.Seed, error) {
	seed := guest.Seed{InstanceID: vmi.Name, Hostname: vmi.Name}
	for _, v := range vmi.Spec.Volumes {
		nc := v.CloudInitNoCloud
		if nc == nil {
			continue
		}
		seed.UserData, seed.NetworkData = []byte(nc.UserData), []byte(nc.NetworkData)
		for _, ref := range []struct {
			secret *corev1.LocalObjectReference
			key    string
			into   *[]byte
		}{{nc.UserDataSecretRef, "userdata", &seed.UserData}, {nc.NetworkDataSecretRef, "networkdata", &seed.NetworkData}} {
			if ref.secret == nil {
				continue
			}
			secret, err := s.kube.CoreV1().Secrets(vmi.Namespace).Get(ctx, ref.secret.Name, metav1.GetOptions{})
			if err != nil {
				return seed, fmt.Errorf("cloud-init Secret: %w", err)
			}
			*ref.into = secret.Data[ref.key]
		}
		return seed, nil
	}
	return seed, errors.New("the VMI has no cloudInitNoCloud volume")
}

func (r *realGuests) get(uid types.UID) *runningGuest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[uid]
}

// release forgets a stopped guest and removes its boot directory.
func (r *realGuests) release(uid types.UID) {
	r.mu.Lock()
	g := r.running[uid]
	delete(r.running, uid)
	r.mu.Unlock()
	if g != nil {
		os.RemoveAll(g.dir)
	}
}

// discardDisk removes the disk of a VM that is gone.
func (r *realGuests) discardDisk(namespace, name string) {
	r.mu.Lock()
	disk, ok := r.disks[namespace+"/"+name]
	delete(r.disks, namespace+"/"+name)
	r.mu.Unlock()
	if ok {
		os.Remove(disk)
	}
}

// shutdown kills every guest and removes all their files (StandIn.Stop).
func (r *realGuests) shutdown() {
	r.mu.Lock()
	running, root := r.running, r.root
	r.running, r.disks, r.root = map[types.UID]*runningGuest{}, map[string]string{}, ""
	r.mu.Unlock()
	for _, g := range running {
		g.machine.Kill()
	}
	if root != "" {
		os.RemoveAll(root)
	}
}
