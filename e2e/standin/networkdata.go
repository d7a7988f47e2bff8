package standin

import (
	"context"
	"fmt"
	"net"
	"strings"

	"go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Keys of a NoCloud Secret's network data: Harvester's, and KubeVirt's own spelling.
var networkDataKeys = []string{"networkdata", "networkData"}

// staticAddresses puts on ifaces (the VMI's interfaces, in spec order) the static addresses the VMI's cloud-init
// network data gives them, in place of the made-up DHCP ones: a guest whose cloud-init configures static addresses
// reports those through its guest agent; those it asks DHCP for by MAC address take what Harvester's managed DHCP
// leased them. Interfaces the network data leaves alone keep theirs.
func (s *StandIn) staticAddresses(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, ifaces []kubevirtv1.VirtualMachineInstanceNetworkInterface) error {
	doc, err := s.networkData(ctx, vmi)
	if err != nil || doc == nil {
		return err
	}
	macs := make([]string, len(ifaces))
	for i, iface := range ifaces {
		macs[i] = iface.MAC
	}
	for i, addrs := range StaticNICAddresses(doc, macs) {
		ifaces[i].IP, ifaces[i].IPs = addrs[0], addrs
	}
	return s.leasedAddresses(ctx, vmi, doc, ifaces) // NICs that ask Harvester's managed DHCP (dhcplease.go)
}

// networkData returns the network data of the VMI's NoCloud disk: inline, or from its Secret; nil when none.
func (s *StandIn) networkData(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) ([]byte, error) {
	for _, v := range vmi.Spec.Volumes {
		nc := v.CloudInitNoCloud
		switch {
		case nc == nil:
			continue
		case nc.NetworkData != "":
			return []byte(nc.NetworkData), nil
		case nc.NetworkDataSecretRef == nil:
			return nil, nil
		}
		secret, err := s.kube.CoreV1().Secrets(vmi.Namespace).Get(ctx, nc.NetworkDataSecretRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		for _, k := range networkDataKeys {
			if b, ok := secret.Data[k]; ok {
				return b, nil
			}
		}
		return nil, nil
	}
	return nil, nil
}

// StaticNICAddresses reads a cloud-init network-config (version 1 or 2, with or without a top-level network key)
// the way a guest applies it to NICs whose MAC addresses are macs and whose names are eth0, eth1, …: for each
// NIC given static addresses, those addresses (without prefix length), by NIC index. Entries are matched by MAC
// address (v2 match.macaddress, v1 mac_address), else by name (v2 set-name or key, v1 name).
func StaticNICAddresses(doc []byte, macs []string) map[int][]string {
	var top map[string]any
	if yaml.Unmarshal(doc, &top) != nil {
		return nil
	}
	if inner, ok := top["network"].(map[string]any); ok {
		top = inner
	}
	nic := func(mac, name string) int {
		for i, m := range macs {
			if sameMAC(m, mac) || (mac == "" && name == fmt.Sprintf("eth%d", i)) {
				return i
			}
		}
		return -1
	}
	out := map[int][]string{}
	add := func(i int, addr any) {
		a, ok := addr.(string)
		if !ok || i < 0 {
			return
		}
		a, _, _ = strings.Cut(strings.TrimSpace(a), "/")
		if net.ParseIP(a) != nil {
			out[i] = append(out[i], a)
		}
	}
	switch top["version"] {
	case 1:
		entries, _ := top["config"].([]any)
		for _, e := range entries {
			m, _ := e.(map[string]any)
			if m["type"] != "physical" {
				continue
			}
			mac, _ := m["mac_address"].(string)
			name, _ := m["name"].(string)
			subnets, _ := m["subnets"].([]any)
			for _, sn := range subnets {
				if sm, _ := sn.(map[string]any); sm["type"] == "static" || sm["type"] == "static6" {
					add(nic(mac, name), sm["address"])
				}
			}
		}
	case 2:
		ethernets, _ := top["ethernets"].(map[string]any)
		for key, e := range ethernets {
			m, _ := e.(map[string]any)
			match, _ := m["match"].(map[string]any)
			mac, _ := match["macaddress"].(string)
			name, _ := m["set-name"].(string)
			if name == "" {
				name = key
			}
			addrs, _ := m["addresses"].([]any)
			for _, a := range addrs {
				add(nic(mac, name), a)
			}
		}
	}
	return out
}

func sameMAC(a, b string) bool {
	x, errA := net.ParseMAC(a)
	y, errB := net.ParseMAC(b)
	return errA == nil && errB == nil && x.String() == y.String()
}
