package objects

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// ownedLabels are the labels the driver sets and others rely on, on the VM and its template: Harvester's VMI
// controller, its cloud provider and load balancer, and Remove (config.LabelCreator: the ownership mark) read them.
var ownedLabels = []string{config.LabelCreator, config.LabelVMName, config.LabelMachineSetName, config.LabelGuestCluster, config.LabelNodePool}

// ownedAnnotations are the annotations the driver sets or reads, on the VM and its template: the disks' claims
// Harvester makes, the claims Remove has Harvester delete (Rancher sets removeAll… on a cluster's deletion; a
// patch setting it would delete every volume of the guest cluster with one machine), the key pairs and the
// lease wait of the template.
var ownedAnnotations = []string{config.AnnotationVolumeClaimTemplates, config.AnnotationRemovedPVCs, config.AnnotationRemoveAllPVCs,
	config.AnnotationSSHNames, config.AnnotationWaitForLeaseInterface}

// owned reports whether a label or annotation key is the driver's: one of keys, or one of its own prefix.
func owned(keys []string, key string) bool {
	return slices.Contains(keys, key) || strings.HasPrefix(key, config.DriverKeyPrefix)
}

// changedParts names the parts of the driver's own that a VM patch changed, comparing the VM the driver built
// with the patched one: by what they hold, not by what the patch says, so that a merge patch setting
// metadata.labels to null or a JSON patch replacing /metadata is seen as well as one naming a label. static says
// the first NIC gets a static address, whose MAC address the driver sets.
func changedParts(built, patched *kubevirtv1.VirtualMachine, static bool) []string {
	secret := CloudInitSecretName(built.Name) // from the VM the driver built
	before, after := ownedParts(built, secret, static), ownedParts(patched, secret, static)
	var changed []string
	for name, v := range before {
		if after[name] != v {
			changed = append(changed, name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return changed
}

// ownedParts returns the parts of vm that are the driver's, each as JSON under the name a problem gives it:
//
//   - apiVersion and kind, and all of metadata but labels and annotations: the VM's name and namespace (the
//     machine's), and what the API server and controllers own (uid, finalizers, ownerReferences, …);
//   - the driver's labels and annotations (ownedLabels, ownedAnnotations, and every key under
//     config.DriverKeyPrefix), on the VM and on its template;
//   - the cloud-init disk and volume, any other volume that is a cloud-init source or names the cloud-init
//     Secret (isCloudInit), and any other place that names it (an access credential, a kernel boot's pull Secret);
//   - every volume that names a claim (a PVC, a DataVolume, an ephemeral or memory-dump claim), and the
//     dataVolumeTemplates: Remove has Harvester delete the claims of the VM's volumes (remove.go, vmClaims), so a
//     claim the driver did not make must never be one of them;
//   - the run strategy (the driver's start and stop set it), and the status (KubeVirt's);
//   - the first NIC's MAC address when --harvester-ip-pool or --harvester-ip-pool-name gives it: the guest's
//     network-config matches it; and with a lease, the annotation that pins it (config.AnnotationStaticIP), which
//     the create sets.
func ownedParts(vm *kubevirtv1.VirtualMachine, secret string, static bool) map[string]string {
	parts := map[string]string{}
	put := func(name string, v any) {
		b, _ := json.Marshal(v) // API types always encode
		parts[name] = string(b)
	}
	put("apiVersion", vm.APIVersion)
	put("kind", vm.Kind)
	meta := vm.ObjectMeta.DeepCopy()
	meta.Labels, meta.Annotations = nil, nil
	var fields map[string]json.RawMessage
	b, _ := json.Marshal(meta)
	_ = json.Unmarshal(b, &fields)
	for k, v := range fields {
		parts["metadata."+k] = string(v)
	}
	putKeys(parts, "metadata.labels", vm.Labels, ownedLabels)
	putKeys(parts, "metadata.annotations", vm.Annotations, ownedAnnotations)
	put("spec.runStrategy", vm.Spec.RunStrategy)
	put("spec.running", vm.Spec.Running)
	put("spec.dataVolumeTemplates", vm.Spec.DataVolumeTemplates)
	put("status", vm.Status)
	t := vm.Spec.Template
	if t == nil {
		return parts
	}
	putKeys(parts, "spec.template.metadata.labels", t.ObjectMeta.Labels, ownedLabels)
	putKeys(parts, "spec.template.metadata.annotations", t.ObjectMeta.Annotations, ownedAnnotations)
	volumes := map[string][]kubevirtv1.Volume{}
	for _, v := range t.Spec.Volumes {
		if v.Name == cloudInitDiskName || isCloudInit(v, secret) || namesClaim(v) {
			volumes[v.Name] = append(volumes[v.Name], v)
		}
	}
	for name, vs := range volumes {
		put("spec.template.spec.volumes["+name+"]", vs)
	}
	for _, r := range references(vm) {
		if r.Name == secret && !strings.HasPrefix(r.Path, "spec.template.spec.volumes[") {
			put(r.Path, r.Name) // the cloud-init Secret named outside a volume: an access credential's, an image's pull Secret
		}
	}
	var disks []kubevirtv1.Disk
	for _, d := range t.Spec.Domain.Devices.Disks {
		if d.Name == cloudInitDiskName {
			disks = append(disks, d)
		}
	}
	put("spec.template.spec.domain.devices.disks["+cloudInitDiskName+"]", disks)
	if static {
		var macs []string
		for _, i := range t.Spec.Domain.Devices.Interfaces {
			if i.Name == config.PrimaryNIC {
				macs = append(macs, i.MacAddress)
			}
		}
		put("spec.template.spec.domain.devices.interfaces["+config.PrimaryNIC+"].macAddress", macs)
		put("metadata.annotations["+config.AnnotationStaticIP+"]", vm.Annotations[config.AnnotationStaticIP])
		put("metadata.annotations["+config.AnnotationStaticIP+"]", vm.Annotations[config.AnnotationStaticIP])
	}
	return parts
}

// putKeys puts each of the driver's keys in labels or annotations under where[key].
func putKeys(parts map[string]string, where string, m map[string]string, keys []string) {
	for k, v := range m {
		if owned(keys, k) {
			b, _ := json.Marshal(v)
			parts[where+"["+k+"]"] = string(b)
		}
	}
}

// isCloudInit reports whether a volume is a cloud-init source or names the cloud-init Secret's name, whatever
// its kind: a secret, a sysprep's Secret or ConfigMap, a configMap, a service account, a containerDisk's pull
// Secret (volumeReferences).
func isCloudInit(v kubevirtv1.Volume, secret string) bool {
	return v.CloudInitNoCloud != nil || v.CloudInitConfigDrive != nil ||
		slices.ContainsFunc(volumeReferences(v), func(r ObjectRef) bool { return r.Name == secret })
}

// namesClaim reports whether a volume names a claim.
func namesClaim(v kubevirtv1.Volume) bool {
	return v.PersistentVolumeClaim != nil || v.DataVolume != nil || v.Ephemeral != nil || v.MemoryDump != nil
}
