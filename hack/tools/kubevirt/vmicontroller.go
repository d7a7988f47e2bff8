package main

import (
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfield "k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	v1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubecli"

	containerdisk "kubevirt.io/kubevirt/pkg/container-disk"
	"kubevirt.io/kubevirt/pkg/controller"
	"kubevirt.io/kubevirt/pkg/hooks"
	netadmitter "kubevirt.io/kubevirt/pkg/network/admitter"
	netcontrollers "kubevirt.io/kubevirt/pkg/network/controllers"
	netmigration "kubevirt.io/kubevirt/pkg/network/migration"
	"kubevirt.io/kubevirt/pkg/network/netbinding"
	netannotations "kubevirt.io/kubevirt/pkg/network/pod/annotations"
	netresources "kubevirt.io/kubevirt/pkg/network/resources"
	storageannotations "kubevirt.io/kubevirt/pkg/storage/pod/annotations"
	"kubevirt.io/kubevirt/pkg/util"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	"kubevirt.io/kubevirt/pkg/virt-controller/services"
	"kubevirt.io/kubevirt/pkg/virt-controller/watch/topology"
	"kubevirt.io/kubevirt/pkg/virt-controller/watch/vmi"
)

// virt-controller's defaults for the flags the template service is built from (kubevirt/kubevirt
// pkg/virt-controller/watch/application.go: the constants launcherImage, exporterImage, launcherQemuTimeout,
// ephemeralDiskDir, defaultLauncherSubGid and the variables containerDiskDir, hotplugDiskDir; none is set by
// Harvester's chart but the images, whose names only end up in the Pod).
const (
	defaultLauncherImage = "virt-launcher"
	exporterImage        = "virt-exportserver"
	launcherQemuTimeout  = 240
	ephemeralDiskDir     = util.VirtShareDir + "-ephemeral-disks"
	launcherSubGid       = 107
)

// newVMIController builds virt-controller's VirtualMachineInstance controller (kubevirt/kubevirt
// pkg/virt-controller/watch/vmi) as virt-controller's initCommon does (pkg/virt-controller/watch/application.go):
// the template service that renders virt-launcher Pods, the network and storage annotation generators, the
// topology hinter, the network status updater, spec validator and migration evaluator. Its informers come from
// factory, as virt-controller's come from its one factory; CDI is absent, as on Harvester, so the DataVolume,
// StorageProfile, CDI and CDIConfig informers are KubeVirt's own dummies (application.go's branch without CDI).
// It returns the controller and what must be synced before it runs.
func newVMIController(factory controller.KubeInformerFactory, client kubecli.KubevirtClient,
	clusterConfig *virtconfig.ClusterConfig, launcherImage string) (*vmi.Controller, []cache.InformerSynced, error) {
	containerdisk.SetLocalDirectoryOnly(filepath.Join(ephemeralDiskDir, "container-disk-data"))

	vmiInformer, vmInformer := factory.VMI(), factory.VirtualMachine()
	podInformer, nodeInformer := factory.KubeVirtPod(), factory.KubeVirtNode()
	pvcInformer, namespaceInformer := factory.PersistentVolumeClaim(), factory.Namespace()
	migrationInformer, storageClassInformer := factory.VirtualMachineInstanceMigration(), factory.StorageClass()
	resourceQuotaInformer := factory.ResourceQuota()
	dataVolumeInformer, storageProfileInformer := factory.DummyDataVolume(), factory.DummyStorageProfile()
	cdiInformer, cdiConfigInformer := factory.DummyCDI(), factory.DummyCDIConfig()

	netAnnotationsGenerator := netannotations.NewGenerator(clusterConfig)
	storageAnnotationsGenerator := storageannotations.NewGenerator(clusterConfig)
	templateService := services.NewTemplateService(launcherImage,
		launcherQemuTimeout,
		util.VirtShareDir,
		ephemeralDiskDir,
		filepath.Join(util.VirtShareDir, "container-disks"),
		filepath.Join(util.VirtShareDir, "hotplug-disks"),
		"", // imagePullSecret
		pvcInformer.GetStore(),
		client,
		clusterConfig,
		launcherSubGid,
		exporterImage,
		resourceQuotaInformer.GetStore(),
		namespaceInformer.GetStore(),
		services.WithSidecarCreator(
			func(vmi *v1.VirtualMachineInstance, _ *v1.KubeVirtConfiguration) (hooks.HookSidecarList, error) {
				return hooks.UnmarshalHookSidecarList(vmi)
			}),
		services.WithSidecarCreator(netbinding.NetBindingPluginSidecarList),
		services.WithNetMemoryCalculator(netresources.MemoryCalculator{}),
		services.WithAnnotationsGenerators(netAnnotationsGenerator, storageannotations.Generator{}),
		services.WithNetTargetAnnotationsGenerator(netAnnotationsGenerator),
	)
	topologyHinter := topology.NewTopologyHinter(nodeInformer.GetStore(), vmiInformer.GetStore(), clusterConfig)

	c, err := vmi.NewController(templateService,
		vmiInformer,
		vmInformer,
		podInformer,
		pvcInformer,
		migrationInformer,
		storageClassInformer,
		newRecorder(client, "virtualmachine-controller"), // virt-controller's vmiRecorder
		client,
		dataVolumeInformer,
		storageProfileInformer,
		cdiInformer,
		cdiConfigInformer,
		factory.KubeVirt(),
		clusterConfig,
		topologyHinter,
		netAnnotationsGenerator,
		storageAnnotationsGenerator,
		netcontrollers.UpdateVMIStatus,
		func(field *k8sfield.Path, vmiSpec *v1.VirtualMachineInstanceSpec, clusterCfg *virtconfig.ClusterConfig) []metav1.StatusCause {
			return netadmitter.ValidateCreation(field, vmiSpec, clusterCfg)
		},
		netmigration.NewEvaluator(),
		nil, nil, // additionalLauncherAnnotationsSync, additionalLauncherLabelsSync: unset by Harvester
	)
	if err != nil {
		return nil, nil, err
	}
	synced := []cache.InformerSynced{vmiInformer.HasSynced, vmInformer.HasSynced, podInformer.HasSynced,
		nodeInformer.HasSynced, pvcInformer.HasSynced, namespaceInformer.HasSynced, migrationInformer.HasSynced,
		storageClassInformer.HasSynced, resourceQuotaInformer.HasSynced, dataVolumeInformer.HasSynced,
		storageProfileInformer.HasSynced, cdiInformer.HasSynced, cdiConfigInformer.HasSynced}
	return c, synced, nil
}
