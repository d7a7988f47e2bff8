package objects

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
)

// What each name a VirtualMachine's spec holds (a string field named …name, …secret, …claim, …ref, …image or
// …path) is: "object" for an object of the namespace the guest gets (references must list it), "claim" for a
// claim (the driver's: vmpatch_owned.go), "beyond" for what beyondGuest refuses, or why it is none of these.
var specNames = map[string]string{
	"spec.template.spec.volumes[].secret.secretName":                               "object",
	"spec.template.spec.volumes[].configMap.name":                                  "object",
	"spec.template.spec.volumes[].serviceAccount.serviceAccountName":               "object",
	"spec.template.spec.volumes[].sysprep.secret.name":                             "object",
	"spec.template.spec.volumes[].sysprep.configMap.name":                          "object",
	"spec.template.spec.volumes[].containerDisk.imagePullSecret":                   "object",
	"spec.template.spec.volumes[].cloudInitNoCloud.secretRef.name":                 "object",
	"spec.template.spec.volumes[].cloudInitNoCloud.networkDataSecretRef.name":      "object",
	"spec.template.spec.volumes[].cloudInitConfigDrive.secretRef.name":             "object",
	"spec.template.spec.volumes[].cloudInitConfigDrive.networkDataSecretRef.name":  "object",
	"spec.template.spec.accessCredentials[].sshPublicKey.source.secret.secretName": "object",
	"spec.template.spec.accessCredentials[].userPassword.source.secret.secretName": "object",
	"spec.template.spec.serviceAccountName":                                        "object",
	"spec.template.spec.domain.firmware.kernelBoot.container.imagePullSecret":      "object",

	"spec.template.spec.volumes[].persistentVolumeClaim.claimName":           "claim",
	"spec.template.spec.volumes[].ephemeral.persistentVolumeClaim.claimName": "claim",
	"spec.template.spec.volumes[].dataVolume.name":                           "claim",
	"spec.template.spec.volumes[].memoryDump.claimName":                      "claim",

	"spec.template.spec.volumes[].hostDisk.path":                                       "beyond",
	"spec.template.spec.volumes[].containerPath.path":                                  "beyond",
	"spec.template.spec.utilityVolumes[].claimName":                                    "beyond",
	"spec.template.spec.resourceClaims[].resourceClaimName":                            "beyond",
	"spec.template.spec.resourceClaims[].resourceClaimTemplateName":                    "beyond",
	"spec.template.spec.utilityVolumes[].name":                                         "beyond",
	"spec.template.spec.resourceClaims[].name":                                         "beyond",
	"spec.template.spec.volumes[].containerDisk.image":                                 "an image Harvester's nodes pull, as they pull its own (the virtio drivers' containerDisk of Windows VMs)",
	"spec.template.spec.volumes[].containerDisk.path":                                  "a path within that image",
	"spec.template.spec.domain.firmware.kernelBoot.container.image":                    "an image Harvester's nodes pull",
	"spec.template.spec.domain.firmware.kernelBoot.container.kernelPath":               "a path within that image",
	"spec.template.spec.domain.firmware.kernelBoot.container.initrdPath":               "a path within that image",
	"spec.template.spec.domain.firmware.acpi.slicNameRef":                              "a volume of the VM, by name",
	"spec.template.spec.domain.firmware.acpi.msdmNameRef":                              "a volume of the VM, by name",
	"spec.template.spec.volumes[].name":                                                "the volume's own name",
	"spec.template.spec.domain.devices.disks[].name":                                   "a volume of the VM, by name",
	"spec.template.spec.domain.devices.filesystems[].name":                             "a volume of the VM, by name",
	"spec.template.spec.domain.devices.interfaces[].name":                              "a network of the VM, by name",
	"spec.template.spec.networks[].name":                                               "the network's own name",
	"spec.template.spec.networks[].multus.networkName":                                 "a network, as --harvester-network-name names one: no data of an object reaches the guest",
	"spec.template.spec.networks[].resourceClaim.claimName":                            "a resourceClaims entry of the VM, by name",
	"spec.template.spec.networks[].resourceClaim.requestName":                          "a request of that entry",
	"spec.template.spec.domain.devices.gpus[].claimName":                               "a resourceClaims entry of the VM, by name",
	"spec.template.spec.domain.devices.gpus[].requestName":                             "a request of that entry",
	"spec.template.spec.domain.devices.hostDevices[].claimName":                        "a resourceClaims entry of the VM, by name",
	"spec.template.spec.domain.devices.hostDevices[].requestName":                      "a request of that entry",
	"spec.template.spec.domain.devices.gpus[].deviceName":                              "a resource name of the hosts, as --harvester-vgpu-info gives",
	"spec.template.spec.domain.devices.hostDevices[].deviceName":                       "a resource name of the hosts, as --harvester-host-device-info gives",
	"spec.template.spec.domain.devices.gpus[].name":                                    "the device's own name",
	"spec.template.spec.domain.devices.hostDevices[].name":                             "the device's own name",
	"spec.template.spec.domain.devices.interfaces[].binding.name":                      "a network binding plugin of KubeVirt's configuration",
	"spec.template.spec.domain.devices.interfaces[].ports[].name":                      "a port's own name",
	"spec.template.spec.domain.devices.interfaces[].dhcpOptions.bootFileName":          "a DHCP option the guest reads",
	"spec.template.spec.domain.devices.interfaces[].dhcpOptions.tftpServerName":        "a DHCP option the guest reads",
	"spec.template.spec.domain.devices.inputs[].name":                                  "the device's own name",
	"spec.template.spec.domain.devices.sound.name":                                     "the device's own name",
	"spec.template.spec.domain.devices.watchdog.name":                                  "the device's own name",
	"spec.template.spec.domain.cpu.features[].name":                                    "a CPU feature",
	"spec.template.spec.volumes[].downwardAPI.fields[].path":                           "a file of the volume: the downward API gives the VMI's own fields",
	"spec.template.spec.volumes[].downwardAPI.fields[].fieldRef.fieldPath":             "a field of the VMI's own",
	"spec.template.spec.volumes[].downwardAPI.fields[].resourceFieldRef.containerName": "a container of the VMI's own pod",
	"spec.template.spec.livenessProbe.httpGet.path":                                    "a probe of the guest",
	"spec.template.spec.readinessProbe.httpGet.path":                                   "a probe of the guest",
	"spec.template.spec.livenessProbe.httpGet.httpHeaders[].name":                      "a probe of the guest",
	"spec.template.spec.readinessProbe.httpGet.httpHeaders[].name":                     "a probe of the guest",
	"spec.template.spec.hostname":                                                      "the guest's own name",
	"spec.template.spec.dnsConfig.options[].name":                                      "a resolver option",
	"spec.template.spec.priorityClassName":                                             "a scheduling priority: no data reaches the guest",
	"spec.template.spec.schedulerName":                                                 "a scheduler: no data reaches the guest",
	"spec.instancetype.name":                                                           "an instance type: CPU, memory and devices, as flags give them, no data of the object reaches the guest",
	"spec.instancetype.revisionName":                                                   "an instance type's revision",
	"spec.preference.name":                                                             "a preference: defaults of devices, no data of the object reaches the guest",
	"spec.preference.revisionName":                                                     "a preference's revision",
}

// namePattern picks the strings of a VM's spec that may name something.
var namePattern = regexp.MustCompile(`(?i)(name|secret|claim|ref|image|path)$`)

// Every name a VirtualMachine's spec holds is known, found by reflection over the pinned kubevirt.io/api (a
// version that adds one fails here until it is put in specNames), and each object, claim and reach beyond the
// guest is seen where specNames says: the VM holding only that name is what the test gives references,
// beyondGuest and the driver's parts.
func TestReferencesKnowEveryName(t *testing.T) {
	var found []string
	isName := func(t reflect.Type, name string) bool {
		return t.Kind() == reflect.String && namePattern.MatchString(name)
	}
	all := func(reflect.Type) bool { return true }
	for _, steps := range typePaths(reflect.TypeFor[kubevirtv1.VirtualMachineSpec](), []string{"spec"}, isName, all, map[reflect.Type]bool{}) {
		path := strings.Join(steps, ".")
		path = strings.ReplaceAll(path, ".[]", "[]")
		if strings.HasPrefix(path, "spec.template.metadata") || strings.HasPrefix(path, "spec.dataVolumeTemplates") {
			continue // the template's metadata names no object for the guest; data volume templates are the driver's
		}
		found = append(found, path)
		what, ok := specNames[path]
		if !ok {
			t.Errorf("%s: a name this test does not know; put it in specNames, saying what it names", path)
			continue
		}
		patch, _ := mergePatchAt(steps, "obj-x")
		var vm kubevirtv1.VirtualMachine
		if err := json.Unmarshal([]byte(patch), &vm); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vm.Name = "m1"
		if vm.Spec.Template == nil {
			if what == "object" || what == "claim" || what == "beyond" {
				t.Errorf("%s: not in the template", path)
			}
			continue
		}
		named := slices.ContainsFunc(references(&vm), func(r ObjectRef) bool { return r.Name == "obj-x" })
		claim := slices.ContainsFunc(vm.Spec.Template.Spec.Volumes, namesClaim)
		beyond := len(beyondGuest(&vm)) > 0
		if got := map[string]bool{"object": named, "claim": claim, "beyond": beyond}; !got[what] && (what == "object" || what == "claim" || what == "beyond") {
			t.Errorf("%s is an %s, but references, namesClaim and beyondGuest say %v", path, what, got)
		} else if what != "object" && named {
			t.Errorf("%s names no object, but references lists it", path)
		}
	}
	for path := range specNames {
		if !slices.Contains(found, path) {
			t.Errorf("specNames has %s, which no VirtualMachine holds", path)
		}
	}
}

// A patch that gives the guest another object lists it, once, with where; the driver's own cloud-init Secret is
// not listed (it is the driver's part, refused elsewhere), nor what the driver's flags name.
func TestObjectRefsOfAPatchedVM(t *testing.T) {
	patch := `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"creds","secret":{"secretName":"team-creds"}}},` +
		`{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"again","secret":{"secretName":"team-creds"}}},` +
		`{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"ca","configMap":{"name":"team-ca"}}},` +
		`{"op":"add","path":"/spec/template/spec/accessCredentials","value":[{"sshPublicKey":{"source":{"secret":{"secretName":"keys"}},"propagationMethod":{"noCloud":{}}}}]},` +
		`{"op":"add","path":"/spec/template/spec/serviceAccountName","value":"robot"}]`
	_, m, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagVMPatch, patch))
	if err != nil {
		t.Fatal(err)
	}
	want := []ObjectRef{
		{KindSecret, "team-creds", "spec.template.spec.volumes[creds].secret"},
		{KindConfigMap, "team-ca", "spec.template.spec.volumes[ca].configMap"},
		{KindSecret, "keys", "spec.template.spec.accessCredentials[0].sshPublicKey.source.secret"},
		{KindServiceAccount, "robot", "spec.template.spec.serviceAccountName"},
	}
	if got := ObjectRefs(m.VM); !slices.Equal(got, want) {
		t.Errorf("ObjectRefs:\n%v\nwant\n%v", got, want)
	}
	if got := want[0].AllowCommand("default"); got != "kubectl -n default label secret team-creds node-driver.harvesterhci.io/vm-patch-allowed=true" {
		t.Errorf("AllowCommand: %s", got)
	}
	plain, _ := config.ParseConfig("m1", configtest.MinimalOptions())
	vm, err := vmFor(plain)
	if err != nil || ObjectRefs(vm) != nil {
		t.Errorf("the driver's VM names %v (%v)", ObjectRefs(vm), err)
	}
}

// A patch may not reach beyond the guest's own: a host's path, a path of virt-launcher's container, claims mounted
// into virt-launcher, devices claimed through dynamic resource allocation. Refused when the flags are parsed.
func TestVMPatchRefusesWhatReachesBeyondTheGuest(t *testing.T) {
	for name, tc := range map[string]struct{ patch, want string }{
		"a host's path": {`[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"h","hostDisk":{"path":"/var/lib/rancher","type":"Disk"}}}]`,
			"spec.template.spec.volumes[h].hostDisk (a path of the host)"},
		"virt-launcher's path": {`[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"c","containerPath":{"path":"/var/run"}}}]`,
			"spec.template.spec.volumes[c].containerPath (a path of virt-launcher's container)"},
		"a utility volume": {`{"spec":{"template":{"spec":{"utilityVolumes":[{"name":"u","claimName":"precious"}]}}}}`, "spec.template.spec.utilityVolumes"},
		"a resource claim": {`{"spec":{"template":{"spec":{"resourceClaims":[{"name":"g","resourceClaimName":"gpu-of-another"}]}}}}`, "spec.template.spec.resourceClaims"},
	} {
		_, _, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), config.FlagVMPatch, tc.patch))
		if err == nil || !strings.Contains(err.Error(), "--harvester-vm-patch: gives the VM what no patch may: "+tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
