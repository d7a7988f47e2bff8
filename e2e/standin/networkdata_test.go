package standin

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"
	kubevirtfake "kubevirt.io/client-go/kubevirt/fake"
)

func TestStaticNICAddresses(t *testing.T) {
	macs := []string{"0a:00:00:00:00:01", "0a:00:00:00:00:02"}
	tests := []struct {
		name, doc string
		want      map[int]string
	}{
		{"v2 by MAC, prefix dropped", "version: 2\nethernets:\n  nic-0:\n    match: {macaddress: \"0A:00:00:00:00:02\"}\n    addresses: [\"10.0.0.10/24\", \"2001:db8::10/64\"]\n",
			map[int]string{1: "10.0.0.10 2001:db8::10"}},
		{"v2 by name under network, DHCP left alone", "network:\n  version: 2\n  ethernets:\n    eth0: {addresses: [192.0.2.5/24]}\n    eth1: {dhcp4: true}\n",
			map[int]string{0: "192.0.2.5"}},
		{"v2 set-name", "version: 2\nethernets:\n  lan: {set-name: eth1, addresses: [192.0.2.6/24]}\n", map[int]string{1: "192.0.2.6"}},
		{"v1 static by MAC and by name", "version: 1\nconfig:\n  - {type: physical, name: x, mac_address: \"0a:00:00:00:00:01\", subnets: [{type: static, address: 10.1.0.5/16}]}\n" +
			"  - {type: physical, name: eth1, subnets: [{type: dhcp}, {type: static6, address: \"2001:db8::6/64\"}]}\n",
			map[int]string{0: "10.1.0.5", 1: "2001:db8::6"}},
		{"no NIC of that MAC", "version: 2\nethernets:\n  a: {match: {macaddress: \"0a:00:00:00:00:09\"}, addresses: [10.0.0.9/24]}\n", map[int]string{}},
		{"not YAML", "version: [", map[int]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[int]string{}
			for i, a := range StaticNICAddresses([]byte(tt.doc), macs) {
				got[i] = strings.Join(a, " ")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i, want := range tt.want {
				if got[i] != want {
					t.Errorf("NIC %d: %q, want %q", i, got[i], want)
				}
			}
		})
	}
}

// The guest agent reports the static address the VMI's network data (in its cloud-init Secret) gives the first
// NIC, instead of a made-up DHCP one.
func TestGuestAgentReportsStaticAddress(t *testing.T) {
	vm, vmi := runningVM("")
	vmi.Spec.Domain.Devices.Interfaces[0].MacAddress = "0a:3c:0a:00:00:0a"
	secret := &corev1.LocalObjectReference{Name: "vm-cloudinit"}
	vmi.Spec.Volumes = []kubevirtv1.Volume{{Name: "cloudinitdisk", VolumeSource: kubevirtv1.VolumeSource{
		CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserDataSecretRef: secret, NetworkDataSecretRef: secret}}}}
	kube := kubefake.NewSimpleClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vm-cloudinit", Namespace: "ns"},
		Data: map[string][]byte{"networkdata": []byte("version: 2\nethernets:\n  nic-0:\n    match: {macaddress: \"0a:3c:0a:00:00:0a\"}\n    addresses: [\"10.0.0.10/24\"]\n")}})
	s := &StandIn{opts: Options{}.withDefaults(), clocks: map[types.UID]map[string]time.Time{}, kube: kube,
		virt: kubevirtfake.NewSimpleClientset(vmi), pvcs: corelisters.NewPersistentVolumeClaimLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil)),
		namespaces: corelisters.NewNamespaceLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil))}
	got, _, err := s.advanceVMI(context.Background(), vm, vmi)
	if err != nil {
		t.Fatal(err)
	}
	if iface := got.Status.Interfaces[0]; iface.IP != "10.0.0.10" || strings.Join(iface.IPs, " ") != "10.0.0.10" || iface.MAC != "0a:3c:0a:00:00:0a" {
		t.Errorf("interface %+v, want the static 10.0.0.10 on its MAC", iface)
	}
}
