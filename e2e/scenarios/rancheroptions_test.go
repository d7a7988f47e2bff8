package scenarios

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/fixtures"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// newOptionFields are the HarvesterConfig fields of the 30 flags beyond the reference driver's 32.
var newOptionFields = []string{"skipGuestAgent", "createTimeout", "zone", "region", "cloudProviderConfig",
	"generateCloudProviderConfig", "cloudProviderServer", "cloudProviderForRke2", "cloudProviderDistribution",
	"cloudProviderDropIn", "hostDeviceInfo", "vmLabels", "evictionStrategy", "maintenanceStrategy", "ipPool",
	"ipPoolGateway", "ipPoolDns", "sshKeypairs", "os", "persistentTpm", "machineType", "ipPoolDnsSearch", "vmPatch", "userDataSecret",
	"networkDataSecret", "persistentEfi", "blockMultiQueue", "ioThreadsPolicy", "ioThreadCount", "ipPoolName"}

// setElsewhere are the new options whose HarvesterConfig field another scenario sets through rancherCreate, since
// they need what this one's pools cannot have, and the scenario that does.
var setElsewhere = map[string]string{
	// It excludes ipPool, and its lease needs the managed DHCP's stand-in.
	"ipPoolName": "TestManagedDHCPLeases",
}

// rancherCreate creates machine name the way Rancher's provisioning job does: the cloud credential Secret's keys
// as environment variables and the HarvesterConfig's fields, pruned to the driver's schema, as flags
// (internal/rancher: Rule.Env, PruneBySchema, ToArgs, which adds --harvester-cluster-name), split by the job's
// entrypoint. It returns what rancher-machine printed.
func rancherCreate(t *testing.T, cli *machineCLI, kubeconfig []byte, harvesterConfig map[string]any, cluster, name string) string {
	t.Helper()
	fields, err := rancher.FieldsOf(config.CreateFlags())
	if err != nil {
		t.Fatal(err)
	}
	cli.Env = []string{rancher.Since213.Env("harvester", "harvestercredentialConfig-kubeconfigContent") + "=" +
		base64.StdEncoding.EncodeToString(kubeconfig)}
	script := filepath.Join(t.TempDir(), "install.sh")
	if err := os.WriteFile(script, []byte(installScript), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := rancher.PruneBySchema(harvesterConfig, fields)
	args := append([]string{"create", "--driver=harvester", "--custom-install-script=" + script},
		rancher.ToArgs("harvester", spec, cluster, rancher.Since213)...)
	return quiet(t, cli.must(entrypointSplit(append(args, name))...)).Output
}

// The Rancher flow with every option beyond the reference driver's set as a HarvesterConfig field: two pools'
// machines (the cloud-provider options exclude each other, and a static address needs a VM network), created as
// Rancher creates them, each option asserted on its VM, VMI or cloud-init Secret.
func TestRancherFlowSetsEveryNewOption(t *testing.T) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	ctx := context.Background()
	const cluster = "gc5"
	installDeviceAddOn(t, b)
	vmStateStorageClass(t, b)
	supportMachineType(t, b, "q35")
	createVMNetwork(t, b, ns, "static-net")
	cleanUpAccount(t, b, ns, cluster+"-cloud-provider")
	if _, err := fixtures.Seed(ctx, b.AdminConfig(), fixtures.Spec{KeyPairs: []fixtures.KeyPair{{Namespace: ns, Name: "alice"}}}); err != nil {
		t.Fatal(err)
	}
	// userDataSecret and networkDataSecret: the user's Secret in the VM namespace, read at create time.
	if _, err := b.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "poolb-cloud-init"},
		StringData: map[string]string{"userdata": "#cloud-config\nruncmd: [echo from-the-users-secret]\n",
			"net": "version: 2\nethernets:\n  eth0:\n    addresses: [10.79.0.5/24]\n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	guestKubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: h, cluster: {server: \"https://192.0.2.100:6443\", insecure-skip-tls-verify: true}}]\n" +
		"users: [{name: g, user: {token: guest-scoped-token}}]\ncontexts: [{name: h, context: {cluster: h, user: g}}]\ncurrent-context: h\n"
	object := func(name string, fields map[string]any) map[string]any {
		o := map[string]any{"apiVersion": rancher.ConfigGroup + "/v1", "kind": "HarvesterConfig",
			"metadata":    map[string]any{"name": name, "namespace": "fleet-default"},
			"vmNamespace": ns, "cpuCount": "2", "memorySize": "4", "clusterName": "", "enableEfi": false}
		for k, v := range fields {
			o[k] = v
		}
		return o
	}
	poolA := object("nc-gc5-poola-x1", map[string]any{
		"diskInfo": `{"disks":[{"imageName":"default/ubuntu-22.04","size":10,"bootOrder":1,"cache":"writethrough"},` +
			`{"storageClassName":"longhorn","size":5,"autoDelete":false,"cache":"none","io":"native","dedicatedIOThread":true}]}`,
		"networkInfo":                 `{"interfaces":[{"networkName":"` + ns + `/static-net","bootOrder":2}]}`,
		"createTimeout":               "300",
		"zone":                        "zone-a",
		"region":                      "region-1",
		"generateCloudProviderConfig": true,
		"cloudProviderServer":         "https://192.0.2.100:6443",
		"cloudProviderForRke2":        true,
		"hostDeviceInfo":              `{"hostDevices":[{"name":"gpu1","deviceName":"` + gpuResource + `"}]}`,
		"vmLabels":                    "team=ml,example.com/cost-center=42",
		"evictionStrategy":            "None",
		"maintenanceStrategy":         "ShutdownAndRestartAfterDisable",
		"ipPool":                      "10.78.0.10-10.78.0.12/24",
		"ipPoolGateway":               "10.78.0.1",
		"ipPoolDns":                   "10.78.0.2",
		"ipPoolDnsSearch":             "example.com,corp.example.com",
		"sshKeypairs":                 "alice,default/e2e-key",
		"os":                          "linux",
		"enableTpm":                   true,
		"persistentTpm":               true,
		"machineType":                 "q35",
		"enableEfi":                   true,
		"persistentEfi":               true,
		"blockMultiQueue":             true,
		"ioThreadsPolicy":             "auto",
	})
	poolB := object("nc-gc5-poolb-x2", map[string]any{
		"imageName": "default/ubuntu-22.04", "diskSize": "10", "networkName": "default/vm-untag",
		"createTimeout":             "240",
		"skipGuestAgent":            true,
		"cloudProviderConfig":       base64.StdEncoding.EncodeToString([]byte(guestKubeconfig)),
		"cloudProviderDistribution": "k3s",
		"cloudProviderDropIn":       true,
		"evictionStrategy":          "External",
		"maintenanceStrategy":       "Shutdown",
		"os":                        "linux",
		"userDataSecret":            "poolb-cloud-init",
		"networkDataSecret":         "poolb-cloud-init:net",
		"vmPatch":                   `{"metadata":{"annotations":{"example.com/owner":"team-ml"}},"spec":{"template":{"spec":{"domain":{"features":{"acpi":{}}}}}}}`,
		"ioThreadsPolicy":           "supplementalPool",
		"ioThreadCount":             "2",
	})
	for _, f := range newOptionFields {
		if isZero(poolA[f]) && isZero(poolB[f]) && setElsewhere[f] == "" {
			t.Errorf("no pool sets the new option %s", f)
		}
	}
	if n := len(config.CreateFlags()); n != 32+len(newOptionFields) {
		t.Fatalf("the driver has %d flags; a new one needs a field in this scenario (newOptionFields has %d)", n, len(newOptionFields))
	}

	cli := newCLI(t, b.AdminKubeconfig())
	nameA, nameB := "gc5-poola-abcde-fghij", "gc5-poolb-abcde-klmno"
	outA := rancherCreate(t, cli, b.AdminKubeconfig(), poolA, cluster, nameA)
	outB := rancherCreate(t, cli, b.AdminKubeconfig(), poolB, cluster, nameB)

	// createTimeout: the readiness wait's bound.
	for out, want := range map[string]string{outA: "(up to 5m0s)", outB: "(up to 4m0s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("createTimeout: the create did not wait %s:\n%s", want, out)
		}
	}

	vmA := getVM(t, b, ns, nameA)
	vmiA := vmiRunning(t, b, ns, nameA)
	specA := vmA.Spec.Template.Spec
	// vmLabels and maintenanceStrategy: labels of the VM, its template and its VMI.
	for where, labels := range map[string]map[string]string{"VM": vmA.Labels, "template": vmA.Spec.Template.ObjectMeta.Labels, "VMI": vmiA.Labels} {
		for k, v := range map[string]string{"team": "ml", "example.com/cost-center": "42",
			"harvesterhci.io/maintain-mode-strategy": "ShutdownAndRestartAfterDisable", "guestcluster.harvesterhci.io/name": cluster} {
			if labels[k] != v {
				t.Errorf("%s label %s = %q, want %q", where, k, labels[k], v)
			}
		}
	}
	if specA.EvictionStrategy == nil || *specA.EvictionStrategy != kubevirtv1.EvictionStrategyNone {
		t.Errorf("evictionStrategy: %v, want None", specA.EvictionStrategy)
	}
	// hostDeviceInfo.
	if hd := specA.Domain.Devices.HostDevices; len(hd) != 1 || hd[0].Name != "gpu1" || hd[0].DeviceName != gpuResource {
		t.Errorf("hostDeviceInfo: host devices %+v", hd)
	}
	// enableTpm, persistentTpm, machineType.
	if tpm := specA.Domain.Devices.TPM; tpm == nil || tpm.Persistent == nil || !*tpm.Persistent {
		t.Errorf("persistentTpm: TPM %+v", tpm)
	}
	if m := specA.Domain.Machine; m == nil || m.Type != "q35" {
		t.Errorf("machineType: %+v", m)
	}
	// enableEfi, persistentEfi: the EFI variables kept (KubeVirt's backend storage, as the TPM's state).
	if f := specA.Domain.Firmware; f == nil || f.Bootloader == nil || f.Bootloader.EFI == nil || f.Bootloader.EFI.Persistent == nil || !*f.Bootloader.EFI.Persistent {
		t.Errorf("persistentEfi: firmware %+v", f)
	}
	// blockMultiQueue, ioThreadsPolicy, on the VM and on the VMI KubeVirt made of it.
	for where, d := range map[string]kubevirtv1.DomainSpec{"VM": specA.Domain, "VMI": vmiA.Spec.Domain} {
		if d.Devices.BlockMultiQueue == nil || !*d.Devices.BlockMultiQueue || d.IOThreadsPolicy == nil || *d.IOThreadsPolicy != kubevirtv1.IOThreadsPolicyAuto {
			t.Errorf("blockMultiQueue, ioThreadsPolicy: %s block multi-queue %v, policy %v", where, d.Devices.BlockMultiQueue, d.IOThreadsPolicy)
		}
	}
	// zone and region: node affinity on the topology labels, and the VMI placed in zone-a.
	zoneTerms := topologyValues(specA.Affinity)
	if !slices.Equal(zoneTerms[corev1.LabelTopologyZone], []string{"zone-a"}) || !slices.Equal(zoneTerms[corev1.LabelTopologyRegion], []string{"region-1"}) {
		t.Errorf("zone, region: node affinity %v", zoneTerms)
	}
	if node, err := b.Kube.CoreV1().Nodes().Get(ctx, vmiA.Status.NodeName, metav1.GetOptions{}); err != nil || node.Labels[corev1.LabelTopologyZone] != "zone-a" {
		t.Errorf("zone: the VMI runs on %q (%v)", vmiA.Status.NodeName, err)
	}
	// diskInfo's cache modes and kept disk, networkInfo's boot order.
	disks := specA.Domain.Devices.Disks
	if len(disks) < 2 || disks[0].Cache != kubevirtv1.CacheWriteThrough || disks[1].Cache != kubevirtv1.CacheNone ||
		disks[0].BootOrder == nil || *disks[0].BootOrder != 1 {
		t.Errorf("disk cache modes and boot order: %+v", disks)
	}
	// diskInfo's io and dedicatedIOThread.
	if len(disks) < 2 || disks[1].IO != kubevirtv1.IONative || disks[1].DedicatedIOThread == nil || !*disks[1].DedicatedIOThread || disks[0].IO != "" {
		t.Errorf("disk I/O modes and dedicated I/O thread: %+v", disks)
	}
	if kept := vmA.Annotations[config.AnnotationKeptVolumes]; kept != disks[1].Name {
		t.Errorf("kept disk: annotation %q, want %s", kept, disks[1].Name)
	}
	if nics := specA.Domain.Devices.Interfaces; len(nics) != 1 || nics[0].BootOrder == nil || *nics[0].BootOrder != 2 {
		t.Errorf("NIC boot order: %+v", nics)
	}
	// sshKeypairs: named on the VM, their keys in its cloud-init.
	var sshNames []string
	if err := json.Unmarshal([]byte(vmA.Spec.Template.ObjectMeta.Annotations["harvesterhci.io/sshNames"]), &sshNames); err != nil ||
		strings.Join(sshNames, ",") != ns+"/alice,default/e2e-key" {
		t.Errorf("sshKeypairs: harvesterhci.io/sshNames %v (%v)", sshNames, err)
	}
	userA, netA := cloudInit(t, b, ns, nameA)
	if len(userA.SSHAuthorizedKeys) != 3 {
		t.Errorf("sshKeypairs: %d authorized keys, want the driver's and two key pairs'", len(userA.SSHAuthorizedKeys))
	}
	// ipPool, ipPoolGateway, ipPoolDns, ipPoolDnsSearch: the first address, as network-config v2, and ip.
	if out := cli.must("ip", nameA).Answer(); out != "10.78.0.10" {
		t.Errorf("ipPool: ip %q, want 10.78.0.10", out)
	}
	nic := netA.Ethernets["nic-0"]
	if strings.Join(nic.Addresses, " ") != "10.78.0.10/24" || len(nic.Routes) != 1 || nic.Routes[0].Via != "10.78.0.1" ||
		strings.Join(nic.Nameservers.Addresses, " ") != "10.78.0.2" || strings.Join(nic.Nameservers.Search, " ") != "example.com corp.example.com" {
		t.Errorf("ipPool options: network data %+v", nic)
	}
	// generateCloudProviderConfig, cloudProviderServer, cloudProviderForRke2: the scoped account's kubeconfig at
	// RKE2's path, pointing at the server given, and RKE2's drop-in.
	token, err := b.Kube.CoreV1().Secrets(ns).Get(ctx, cluster+"-cloud-provider-token", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("generateCloudProviderConfig: no account token: %v", err)
	}
	wantFile(t, userA, "/var/lib/rancher/rke2/etc/config-files/cloud-provider-config", string(token.Data["token"]), "https://192.0.2.100:6443")
	wantFile(t, userA, "/etc/rancher/rke2/config.yaml.d/90-harvester-cloud-provider.yaml", "cloud-provider-name: harvester")
	// os linux: Rancher's install script runs last; the guest agent is installed unless skipped.
	for who, u := range map[string]userData{nameA: userA} {
		if n := len(u.Runcmd); n == 0 || u.Runcmd[n-1] != "sh /usr/local/custom_script/install.sh" || !slices.Contains(u.Packages, "qemu-guest-agent") {
			t.Errorf("%s: runcmd %v, packages %v", who, u.Runcmd, u.Packages)
		}
	}

	vmB := getVM(t, b, ns, nameB)
	if s := vmB.Spec.Template.Spec.EvictionStrategy; s == nil || *s != kubevirtv1.EvictionStrategyExternal {
		t.Errorf("evictionStrategy: %v, want External", s)
	}
	if l := vmB.Labels["harvesterhci.io/maintain-mode-strategy"]; l != "Shutdown" {
		t.Errorf("maintenanceStrategy: %q", l)
	}
	// ioThreadsPolicy supplementalPool with its ioThreadCount.
	if d := vmB.Spec.Template.Spec.Domain; d.IOThreadsPolicy == nil || *d.IOThreadsPolicy != kubevirtv1.IOThreadsPolicySupplementalPool ||
		d.IOThreads == nil || d.IOThreads.SupplementalPoolThreadCount == nil || *d.IOThreads.SupplementalPoolThreadCount != 2 {
		t.Errorf("ioThreadsPolicy, ioThreadCount: policy %v, threads %+v", d.IOThreadsPolicy, d.IOThreads)
	}
	// vmPatch: a field no flag covers, and an annotation of the user's, on the stored VM.
	if f := vmB.Spec.Template.Spec.Domain.Features; f == nil || vmB.Annotations["example.com/owner"] != "team-ml" {
		t.Errorf("vmPatch: features %+v, annotations %v", f, vmB.Annotations)
	}
	userB, netB := cloudInit(t, b, ns, nameB)
	// userDataSecret, merged as inline user data is (before the install script); networkDataSecret, as it is.
	if n := len(userB.Runcmd); n < 2 || userB.Runcmd[n-2] != "echo from-the-users-secret" {
		t.Errorf("userDataSecret: runcmd %v", userB.Runcmd)
	}
	if e := netB.Ethernets["eth0"]; !slices.Equal(e.Addresses, []string{"10.79.0.5/24"}) {
		t.Errorf("networkDataSecret: network data %+v", netB)
	}
	// skipGuestAgent: no qemu-guest-agent from cloud-init; os linux: the install script still runs last.
	if slices.Contains(userB.Packages, "qemu-guest-agent") {
		t.Errorf("skipGuestAgent: packages %v", userB.Packages)
	}
	if n := len(userB.Runcmd); n == 0 || userB.Runcmd[n-1] != "sh /usr/local/custom_script/install.sh" {
		t.Errorf("os linux: runcmd %v", userB.Runcmd)
	}
	// cloudProviderConfig, cloudProviderDistribution k3s, cloudProviderDropIn.
	wantFile(t, userB, "/var/lib/rancher/k3s/etc/config-files/cloud-provider-config", "guest-scoped-token")
	wantFile(t, userB, "/etc/rancher/k3s/config.yaml.d/90-harvester-cloud-provider.yaml", "disable-cloud-controller: true")

	cli.must("rm", "-y", nameA)
	cli.must("rm", "-y", nameB)
	claim := ""
	for _, v := range specA.Volumes {
		if v.Name == disks[1].Name && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if _, err := b.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{}); err != nil {
		t.Errorf("kept disk: claim %q is gone after rm: %v", claim, err)
	}
	_ = b.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{})
}

// vmStateStorageClass makes the storage class KubeVirt keeps a persistent TPM's state and EFI variables in (the bed's KubeVirt
// configuration names vmstate-persistence, as Harvester's does) unless it exists, and removes it after the test.
func vmStateStorageClass(t *testing.T, b *testbed.Bed) {
	t.Helper()
	ctx := context.Background()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "vmstate-persistence"}, Provisioner: "driver.longhorn.io"}
	if _, err := b.Kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Kube.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
}

// supportMachineType labels every host as KubeVirt's node labeller labels one whose libvirt supports machine type
// (virt-handler pkg/virt-handler/node-labeller, node_labeller.go: machine-type.node.kubevirt.io/<type>, the
// aliases like q35 among them): KubeVirt puts that label in the launcher Pod's node selector of a VM that names
// its machine type (pkg/virt-controller/services/nodeselectorrenderer.go, WithMachineType). The bed's hosts
// have no labeller; the labels are removed after the test.
func supportMachineType(t *testing.T, b *testbed.Bed, machineType string) {
	t.Helper()
	ctx := context.Background()
	nodes, err := b.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	label := kubevirtv1.SupportedMachineTypeLabel + machineType
	patch := func(value any) {
		for _, n := range nodes.Items {
			raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{label: value}}})
			if _, err := b.Kube.CoreV1().Nodes().Patch(context.Background(), n.Name, types.MergePatchType, raw, metav1.PatchOptions{}); err != nil {
				t.Error(err)
			}
		}
	}
	patch("true")
	t.Cleanup(func() { patch(nil) })
}

func isZero(v any) bool { return v == nil || v == "" || v == false }

func getVM(t *testing.T, b *testbed.Bed, ns, name string) *kubevirtv1.VirtualMachine {
	t.Helper()
	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// topologyValues are the values the VM's required node affinity allows for each label key.
func topologyValues(a *corev1.Affinity) map[string][]string {
	out := map[string][]string{}
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			out[e.Key] = append(out[e.Key], e.Values...)
		}
	}
	return out
}

// userData is what the scenario reads of a machine's cloud-config.
type userData struct {
	SSHAuthorizedKeys []string `yaml:"ssh_authorized_keys"`
	Packages          []string `yaml:"packages"`
	Runcmd            []any    `yaml:"runcmd"`
	WriteFiles        []struct {
		Path, Encoding, Content string
	} `yaml:"write_files"`
}

// networkData is what the scenario reads of a machine's network-config v2.
type networkData struct {
	Ethernets map[string]struct {
		Addresses   []string                   `yaml:"addresses"`
		Routes      []struct{ To, Via string } `yaml:"routes"`
		Nameservers struct {
			Addresses []string `yaml:"addresses"`
			Search    []string `yaml:"search"`
		} `yaml:"nameservers"`
	} `yaml:"ethernets"`
}

// cloudInit reads machine name's cloud-init Secret.
func cloudInit(t *testing.T, b *testbed.Bed, ns, name string) (userData, networkData) {
	t.Helper()
	secret, err := b.Kube.CoreV1().Secrets(ns).Get(context.Background(), name+"-cloudinit", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var u userData
	var n networkData
	if err := yaml.Unmarshal(secret.Data["userdata"], &u); err != nil {
		t.Fatalf("%s: user data: %v", name, err)
	}
	if len(secret.Data["networkdata"]) > 0 {
		if err := yaml.Unmarshal(secret.Data["networkdata"], &n); err != nil {
			t.Fatalf("%s: network data: %v", name, err)
		}
	}
	return u, n
}

// wantFile asserts that the cloud-config writes path holding each of want (content plain or base64).
func wantFile(t *testing.T, u userData, path string, want ...string) {
	t.Helper()
	for _, f := range u.WriteFiles {
		if f.Path != path {
			continue
		}
		content := f.Content
		if strings.Contains(f.Encoding, "b64") || f.Encoding == "base64" {
			raw, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil {
				t.Errorf("%s: %v", path, err)
			}
			content = string(raw)
		}
		for _, w := range want {
			if !strings.Contains(content, w) {
				t.Errorf("%s does not hold %q", path, w)
			}
		}
		return
	}
	t.Errorf("the cloud-config does not write %s", path)
}
