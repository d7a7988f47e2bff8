package main

import (
	"fmt"
	"net/http"
	"reflect"

	cniv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"github.com/rancher/wrangler/v3/pkg/webhook"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	harvesterv1 "github.com/harvester/harvester/pkg/apis/harvesterhci.io/v1beta1"
	indexeresutil "github.com/harvester/harvester/pkg/util/indexeres"
	"github.com/harvester/harvester/pkg/webhook/config"
	indexerwebhook "github.com/harvester/harvester/pkg/webhook/indexeres"
	"github.com/harvester/harvester/pkg/webhook/resources/virtualmachine"
	"github.com/harvester/harvester/pkg/webhook/types"
)

// validationPath is where Harvester's webhook server serves validation (pkg/webhook/server/server.go,
// validationPath).
const validationPath = "/v1/webhook/validation"

// harvesterOptions are the webhook's options as Harvester's chart sets them (deploy/charts/harvester/templates
// deployment.yaml: NAMESPACE, HARVESTER_CONTROLLER_USER_NAME; cmd/webhook/main.go: the gc-user default). The
// VirtualMachine validator does not read them; the admission handler takes them.
var harvesterOptions = &config.Options{
	Namespace:                   "harvester-system",
	HarvesterControllerUsername: "system:serviceaccount:harvester-system:harvester",
	GarbageCollectionUsername:   "system:serviceaccount:kube-system:generic-garbage-collector",
}

// newValidator returns Harvester's VirtualMachine validator with its twelve caches reading s, and on them the
// indexes its checks look objects up by, registered as Harvester's webhook registers them
// (pkg/webhook/indexeres RegisterIndexers).
func newValidator(s store) types.Validator {
	vmCache := newCache[kubevirtv1.VirtualMachine](s, vms)
	vmCache.AddIndexer(indexeresutil.VMByPVCIndex, indexeresutil.VMByPVC)
	vmCache.AddIndexer(indexeresutil.VMByHotplugPVCIndex, indexeresutil.VMByHotplugPVC)
	vmCache.AddIndexer(indexeresutil.VMByNonShareablePVCIndex, indexeresutil.VMByNonShareablePVC)
	vmCache.AddIndexer(indexerwebhook.VMByMacAddress, vmByMacaddrs)
	podCache := newCache[corev1.Pod](s, pods)
	podCache.AddIndexer(indexeresutil.PodByVMNameIndex, indexeresutil.PodByVMName)
	vmBackupCache := newCache[harvesterv1.VirtualMachineBackup](s, vmBackups)
	vmBackupCache.AddIndexer(indexerwebhook.VMBackupBySourceUIDIndex, vmBackupBySourceUID)
	vmimCache := newCache[kubevirtv1.VirtualMachineInstanceMigration](s, vmims)
	vmimCache.AddIndexer(indexerwebhook.VMInstanceMigrationByVM, vmInstanceMigrationByVM)
	scCache := newClusterCache[storagev1.StorageClass](s, storageClasses)
	scCache.AddIndexer(indexeresutil.StorageClassBySecretIndex, indexeresutil.StorageClassBySecret)

	return virtualmachine.NewValidator(
		newClusterCache[corev1.Namespace](s, namespaces),
		podCache,
		newCache[corev1.PersistentVolumeClaim](s, pvcs),
		newCache[corev1.ResourceQuota](s, resourceQuotas),
		vmBackupCache,
		vmimCache,
		vmCache,
		newCache[kubevirtv1.VirtualMachineInstance](s, vmis),
		newCache[cniv1.NetworkAttachmentDefinition](s, nads),
		newCache[kubevirtv1.KubeVirt](s, kubevirts),
		scCache,
		newClusterCache[harvesterv1.Setting](s, settings),
	)
}

// newHandler routes AdmissionReviews to the validator the way Harvester's webhook server does
// (pkg/webhook/server: wrangler's webhook router, addHandler, types.NewAdmissionHandler around
// types.NewValidatorAdapter), so answers and messages are Harvester's own.
func newHandler(v types.Validator) http.Handler {
	router := webhook.NewRouter()
	admitter := types.NewValidatorAdapter(v)
	rsc := admitter.Resource()
	kind := reflect.Indirect(reflect.ValueOf(rsc.ObjectType)).Type().Name()
	router.Kind(kind).Group(rsc.APIGroup).Type(rsc.ObjectType).
		Handle(types.NewAdmissionHandler(admitter, types.AdmissionTypeValidation, harvesterOptions))
	return router
}

// The index functions below are Harvester's (pkg/webhook/indexeres/indexer.go, v1.8.2), which it does not
// export; copied as they are.

func vmByMacaddrs(obj *kubevirtv1.VirtualMachine) (vmmacs []string, err error) {
	if obj.Spec.Template == nil {
		return vmmacs, fmt.Errorf("vm %s template is nil", obj.Name)
	}
	for _, vmInterface := range obj.Spec.Template.Spec.Domain.Devices.Interfaces {
		if vmInterface.MacAddress == "" {
			continue
		}
		vmmacs = append(vmmacs, vmInterface.MacAddress)
	}
	return vmmacs, nil
}

func vmBackupBySourceUID(obj *harvesterv1.VirtualMachineBackup) ([]string, error) {
	if obj.Status.SourceUID != nil {
		return []string{string(*obj.Status.SourceUID)}, nil
	}
	return []string{}, nil
}

func vmInstanceMigrationByVM(obj *kubevirtv1.VirtualMachineInstanceMigration) ([]string, error) {
	return []string{fmt.Sprintf("%s/%s", obj.Namespace, obj.Spec.VMIName)}, nil
}
