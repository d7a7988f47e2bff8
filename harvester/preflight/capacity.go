package preflight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// DeviceCapacityAccess is what checkDeviceCapacity reads: the hosts and the VMIs of every namespace. Not asked for
// in the access review: without it the count is skipped (debug log).
var DeviceCapacityAccess = []kube.Access{
	{Resource: "nodes", Verb: "list", ClusterScoped: true},
	{Group: kubevirtv1.SchemeGroupVersion.Group, Resource: "virtualmachineinstances", Verb: "list", ClusterScoped: true},
}

// checkDeviceCapacity makes sure Harvester's hosts can still give every vGPU and host device the machine's VM
// passes through (devices); otherwise the VM would be created and sit in ErrorUnschedulable until the timeout (harvester/harvester
// #5774, #10906, #11591). It reads what Harvester's own device-capacity link computes for the Rancher UI: the
// hosts' allocatable count of each device resource (node.status.allocatable, set by the device plugins the
// pcidevices add-on runs) less one for each VM device entry that asks for it (harvester/harvester
// pkg/api/cluster/formatter.go, calculateAllocation; the Rancher dashboard's machine-config form reads it through
// the cluster's deviceCapacity link and refuses a vGPU whose allocatable count is below the count asked for:
// rancher/dashboard pkg/harvester-manager/machine-config/harvester.vue, getAvailableVGpuDevices and
// validatorVGpus). Unlike that link it counts per host and only VMIs, which hold their devices while they exist
// (a stopped VM holds none), and it gives no count to a cordoned host or one outside the requested zones and
// regions. A credential that may not list hosts or VMIs is not blocked: the check is skipped (debug log). It
// creates nothing, and is skipped when the devices are already refused (checkHostDevices).
func checkDeviceCapacity(ctx context.Context, r *run, devices []vmDevice) {
	wanted, flags := requestedDevices(devices)
	for name := range wanted {
		wanted[name] *= machineCount(r.in)
	}
	if len(wanted) == 0 {
		return
	}
	for _, pr := range r.p.List {
		if pr.Flag == config.FlagHostDeviceInfo || pr.Flag == config.FlagVGPUInfo {
			return
		}
	}
	nodes, err := kube.List(ctx, r.c, kube.Nodes, "", metav1.ListOptions{ResourceVersion: kube.FromCache})
	if err != nil {
		r.u.addf("cannot list nodes (%s): free devices not counted", errWording(err))
		return
	}
	if len(nodes) == 0 {
		return // a server that lists no hosts is no Harvester; nothing to tell
	}
	vmiList, err := r.c.VirtualMachineInstances("").List(ctx, metav1.ListOptions{ResourceVersion: kube.FromCache})
	if err != nil {
		r.u.addf("cannot list virtualmachineinstances in all namespaces (%s): free devices not counted", errWording(err))
		return
	}
	nodes = slices.DeleteFunc(nodes, func(n corev1.Node) bool { return !inTopology(r.cfg, n) })
	use := deviceUse(nodes, vmiList.Items)
	names := make([]string, 0, len(wanted))
	for name := range wanted {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		msg := use.shortage(name, wanted[name])
		switch {
		case msg == "":
		case len(use.unknown[name]) > 0:
			// The hosts counted do not have enough; the others' counts are unknown.
			r.u.addf("%s: %s: free devices not counted", name, strings.Join(use.unknown[name], "; "))
		default:
			r.p.Addf(flags[name], "%s; stop a VM that holds one or enable passthrough on another device (Advanced → PCI Devices, USB Devices or vGPU Devices)", msg)
		}
	}
}

// requestedDevices counts the devices by resource name, with the flag that asked for each (the first's).
func requestedDevices(devices []vmDevice) (map[string]int, map[string]string) {
	wanted, flags := map[string]int{}, map[string]string{}
	for _, d := range devices {
		if wanted[d.deviceName]++; wanted[d.deviceName] == 1 {
			flags[d.deviceName] = d.flag
		}
	}
	return wanted, flags
}

// inTopology says whether the machine may be placed on node: schedulable, and in its zones and regions.
func inTopology(cfg *config.Config, n corev1.Node) bool {
	return !n.Spec.Unschedulable && inZones(cfg, n.Labels[corev1.LabelTopologyZone], n.Labels[corev1.LabelTopologyRegion])
}

// inZones reports whether a host in zone and region may run the VM (--harvester-zone, --harvester-region).
func inZones(cfg *config.Config, zone, region string) bool {
	return (len(cfg.Zones) == 0 || slices.Contains(cfg.Zones, zone)) && (len(cfg.Regions) == 0 || slices.Contains(cfg.Regions, region))
}

// devicesInUse is, per device resource name, what each host has and who holds it.
type devicesInUse struct {
	hosts       []string                       // the hosts considered, sorted
	allocatable map[string]map[string]int64    // resource → host → allocatable count
	unknown     map[string][]string            // resource → why a host's count is not known (counted as 0)
	holders     map[string]map[string][]string // resource → host → VMIs (namespace/name) holding one each
	waiting     map[string][]string            // resource → VMIs not placed yet, each to take one somewhere
}

// deviceUse tallies the hosts' allocatable device counts and the VMIs that hold or wait for devices. A VMI that
// has finished (Succeeded, Failed) holds nothing. A count no quantity holds (kube.QuantityInRange: 100E would
// read as 0) or a negative one is not known, and said so.
func deviceUse(nodes []corev1.Node, vmis []kubevirtv1.VirtualMachineInstance) devicesInUse {
	u := devicesInUse{allocatable: map[string]map[string]int64{}, unknown: map[string][]string{},
		holders: map[string]map[string][]string{}, waiting: map[string][]string{}}
	for _, n := range nodes {
		u.hosts = append(u.hosts, n.Name)
		for res, q := range n.Status.Allocatable {
			err := kube.QuantityInRange(q)
			if err == nil && q.Sign() < 0 {
				err = fmt.Errorf("%s is negative", q.String())
			}
			if err != nil {
				u.unknown[string(res)] = append(u.unknown[string(res)], fmt.Sprintf("the allocatable count of host %s %v", n.Name, err))
				continue
			}
			if u.allocatable[string(res)] == nil {
				u.allocatable[string(res)] = map[string]int64{}
			}
			u.allocatable[string(res)][n.Name] = q.Value()
		}
	}
	sort.Strings(u.hosts)
	for _, why := range u.unknown {
		sort.Strings(why)
	}
	for _, vmi := range vmis {
		if vmi.Status.Phase == kubevirtv1.Succeeded || vmi.Status.Phase == kubevirtv1.Failed {
			continue
		}
		var names []string
		for _, g := range vmi.Spec.Domain.Devices.GPUs {
			names = append(names, g.DeviceName)
		}
		for _, hd := range vmi.Spec.Domain.Devices.HostDevices {
			names = append(names, hd.DeviceName)
		}
		who := vmi.Namespace + "/" + vmi.Name
		for _, res := range names {
			if vmi.Status.NodeName == "" {
				u.waiting[res] = append(u.waiting[res], who)
				continue
			}
			if u.holders[res] == nil {
				u.holders[res] = map[string][]string{}
			}
			u.holders[res][vmi.Status.NodeName] = append(u.holders[res][vmi.Status.NodeName], who)
		}
	}
	return u
}

// free is how many devices of resource the hosts can still give; counts that together pass an int64 (each may
// be up to 2^63−1) make math.MaxInt64.
func (u devicesInUse) free(res string) int64 {
	var free int64
	for _, h := range u.hosts {
		left := max(0, u.allocatable[res][h]-int64(len(u.holders[res][h])))
		free = min(free, math.MaxInt64-left) + left
	}
	return max(0, free-int64(len(u.waiting[res])))
}

// shortage words a request of n devices of resource that the hosts cannot give, or returns "" when they can:
// "nvidia.com/GA102GL_A10: 1 requested, none free (node1: 1 allocatable, 1 in use by default/vm-a; node2: 0)".
func (u devicesInUse) shortage(res string, n int) string {
	free := u.free(res)
	if free >= int64(n) {
		return ""
	}
	freeWords := "none free"
	if free > 0 {
		freeWords = fmt.Sprintf("only %d free", free)
	}
	var hosts []string
	for _, h := range u.hosts {
		alloc, held := u.allocatable[res][h], u.holders[res][h]
		switch {
		case alloc == 0 && len(held) == 0:
			hosts = append(hosts, h+": 0")
		case len(held) == 0:
			hosts = append(hosts, fmt.Sprintf("%s: %d allocatable, none in use", h, alloc))
		default:
			hosts = append(hosts, fmt.Sprintf("%s: %d allocatable, %d in use by %s", h, alloc, len(held), holderList(held)))
		}
	}
	if len(hosts) == 0 {
		hosts = append(hosts, "no schedulable host in the machine's zones and regions")
	}
	if w := u.waiting[res]; len(w) > 0 {
		hosts = append(hosts, fmt.Sprintf("%d wanted by %s, not yet placed", len(w), holderList(w)))
	}
	return fmt.Sprintf("%s: %d requested, %s (%s)", res, n, freeWords, strings.Join(hosts, "; "))
}

// holderList names at most three VMIs, one holding several devices once with its count: "team/vm-b (2)".
func holderList(held []string) string {
	count := map[string]int{}
	var who []string
	for _, w := range held {
		if count[w]++; count[w] == 1 {
			who = append(who, w)
		}
	}
	for i, w := range who {
		if count[w] > 1 {
			who[i] = fmt.Sprintf("%s (%d)", w, count[w])
		}
	}
	if len(who) <= 3 {
		return lists.Join(who, "and")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(who[:3], ", "), len(who)-3)
}
