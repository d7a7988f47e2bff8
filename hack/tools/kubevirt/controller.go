package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	k8sv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	k8scorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	v1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubecli"

	"kubevirt.io/kubevirt/pkg/controller"
	instancetypecontroller "kubevirt.io/kubevirt/pkg/instancetype/controller/vm"
	netcontrollers "kubevirt.io/kubevirt/pkg/network/controllers"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	"kubevirt.io/kubevirt/pkg/virt-controller/watch/vm"
	"kubevirt.io/kubevirt/pkg/virt-controller/watch/vmi"

	"github.com/harvester/docker-machine-driver-harvester/hack/tools/internal/serve"
)

// runController runs virt-controller's VirtualMachine controller (kubevirt/kubevirt
// pkg/virt-controller/watch/vm) out of cluster against -kubeconfig, wired as virt-controller wires it
// (pkg/virt-controller/watch/application.go initVirtualMachines): the same informers, the network and firmware
// synchronizers, the instancetype controller and an event recorder. CDI is absent, as on Harvester, so the
// DataVolume and DataSource informers are KubeVirt's own dummies.
//
// The cluster configuration is read, as virt-controller reads it, from the KubeVirt resource in -namespace.
// Playing virt-operator's part, the command first makes sure that resource exists with Harvester's
// configuration (config.go) and reports it Deployed: virt-config ignores a KubeVirt without a phase.
//
// With -vmi it runs virt-controller's VirtualMachineInstance controller too (vmicontroller.go), which makes each
// VMI's virt-launcher Pod and moves the VMI up to Scheduled once the Pod runs.
//
// It runs until SIGTERM or SIGINT. Once its caches are synced it writes "ready" to -ready-file.
func runController(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "cluster to run against (required)")
	namespace := fs.String("namespace", "harvester-system", "namespace of the KubeVirt resource (Harvester installs KubeVirt there)")
	workers := fs.Int("workers", 3, "VirtualMachine workers (virt-controller's default is 3)")
	readyFile := fs.String("ready-file", "", "write \"ready\" to this file once the caches are synced")
	withVMI := fs.Bool("vmi", false, "run the VirtualMachineInstance controller too: it makes the virt-launcher Pods (vmicontroller.go)")
	vmiWorkers := fs.Int("vmi-workers", 10, "VirtualMachineInstance workers (virt-controller's default is 10)")
	launcherImage := fs.String("launcher-image", defaultLauncherImage, "the virt-launcher image of the Pods the VirtualMachineInstance controller makes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return errors.New("controller needs -kubeconfig")
	}
	restConfig, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("client for %s: %w", *kubeconfig, err)
	}
	// virt-controller's client rate, as application.go sets it (client-go's default of 5 requests a second would
	// throttle a controller that writes a VM's status several times per start).
	restConfig.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(virtconfig.DefaultVirtControllerQPS, virtconfig.DefaultVirtControllerBurst)
	client, err := kubecli.GetKubevirtClientFromRESTConfig(restConfig)
	if err != nil {
		return fmt.Errorf("client for %s: %w", *kubeconfig, err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	conf, err := harvesterConfiguration()
	if err != nil {
		return err
	}
	if err := ensureKubeVirt(ctx, client, *namespace, conf); err != nil {
		return err
	}

	factory := controller.NewKubeInformerFactory(client.RestClient(), client, client, nil, *namespace)
	crdInformer, kubeVirtInformer := factory.CRD(), factory.KubeVirt()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), crdInformer.HasSynced, kubeVirtInformer.HasSynced) {
		return fmt.Errorf("the CRD and KubeVirt caches did not sync: %w", ctx.Err())
	}
	clusterConfig, err := virtconfig.NewClusterConfig(crdInformer, kubeVirtInformer, *namespace)
	if err != nil {
		return err
	}
	if err := checkHarvesterConfig(clusterConfig, conf); err != nil {
		return err
	}

	vmiInformer, vmInformer := factory.VMI(), factory.VirtualMachine()
	revisions := factory.ControllerRevision()
	instancetypes, clusterInstancetypes := factory.VirtualMachineInstancetype(), factory.VirtualMachineClusterInstancetype()
	preferences, clusterPreferences := factory.VirtualMachinePreference(), factory.VirtualMachineClusterPreference()
	recorder := newRecorder(client, "virtualmachine-controller")
	vmController, err := vm.NewController(
		vmiInformer,
		vmInformer,
		factory.DummyDataVolume(),
		factory.DummyDataSource(),
		kubeVirtInformer,
		factory.Namespace(),
		factory.PersistentVolumeClaim(),
		revisions,
		recorder,
		client,
		clusterConfig,
		netcontrollers.NewVMController(client.GeneratedKubeVirtClient()),
		vm.NewFirmwareController(client.GeneratedKubeVirtClient()),
		instancetypecontroller.New(
			instancetypes.GetStore(), clusterInstancetypes.GetStore(),
			preferences.GetStore(), clusterPreferences.GetStore(),
			revisions.GetStore(), client, clusterConfig, recorder,
		),
		nil, nil, // additionalLauncherAnnotationsSync, additionalLauncherLabelsSync: virt-controller's flags, unset by Harvester
	)
	if err != nil {
		return err
	}
	synced := []cache.InformerSynced{vmiInformer.HasSynced, vmInformer.HasSynced, revisions.HasSynced,
		instancetypes.HasSynced, clusterInstancetypes.HasSynced, preferences.HasSynced, clusterPreferences.HasSynced}
	var vmiController *vmi.Controller
	if *withVMI {
		var vmiSynced []cache.InformerSynced
		if vmiController, vmiSynced, err = newVMIController(factory, client, clusterConfig, *launcherImage); err != nil {
			return err
		}
		synced = append(synced, vmiSynced...)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("the controllers' caches did not sync: %w", ctx.Err())
	}
	go vmController.Run(*workers, ctx.Done())
	if vmiController != nil {
		go vmiController.Run(*vmiWorkers, ctx.Done())
		fmt.Fprintf(stderr, "kubevirt controller: VirtualMachineInstance controller running (%d workers)\n", *vmiWorkers)
	}
	if *readyFile != "" {
		if err := serve.WriteAtomic(*readyFile, "ready"); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "kubevirt controller: VirtualMachine controller running (%d workers)\n", *workers)
	<-ctx.Done()
	fmt.Fprintln(stderr, "kubevirt controller: stopping")
	return nil
}

// ensureKubeVirt creates the KubeVirt resource virt-operator would, named kubevirt as Harvester's chart names it,
// with Harvester's configuration, unless one exists; and reports it Deployed. An existing resource is left as it
// is but for a missing phase.
func ensureKubeVirt(ctx context.Context, client kubecli.KubevirtClient, namespace string, conf *v1.KubeVirtConfiguration) error {
	api := client.KubeVirt(namespace)
	kv := &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt", Namespace: namespace},
		Spec: v1.KubeVirtSpec{Configuration: *conf}}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := api.Create(ctx, kv, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = api.Get(ctx, kv.Name, metav1.GetOptions{})
		}
		if err == nil && got.Status.Phase == "" {
			got.Status.Phase = v1.KubeVirtPhaseDeployed
			_, err = api.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		}
		switch {
		case err == nil:
			return nil
		case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err), time.Now().After(deadline):
			// The namespace or the CRD may still be on its way, or the status was written meanwhile; anything
			// else is final.
			return fmt.Errorf("KubeVirt resource %s/kubevirt: %w", namespace, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// newRecorder records events through the API server, as virt-controller's newRecorder does.
func newRecorder(client kubecli.KubevirtClient, component string) record.EventRecorder {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&k8scorev1.EventSinkImpl{Interface: client.CoreV1().Events(k8sv1.NamespaceAll)})
	return b.NewRecorder(scheme.Scheme, k8sv1.EventSource{Component: component})
}
