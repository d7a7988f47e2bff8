// Package testbed composes the simulated Harvester the end-to-end tests and `make demo` run against: a real
// control plane, Harvester's and KubeVirt's own CRDs (package upstream), KubeVirt's and Harvester's own
// VirtualMachine admission (package admission), a seeded cluster state, KubeVirt's own VM and VMI controllers
// (package virtcontroller) and the stand-in controllers for what it leaves to others (package standin).
package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"kubevirt.io/client-go/kubevirt"

	"github.com/harvester/docker-machine-driver-harvester/e2e/admission"
	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
	"github.com/harvester/docker-machine-driver-harvester/e2e/crds"
	"github.com/harvester/docker-machine-driver-harvester/e2e/credential"
	"github.com/harvester/docker-machine-driver-harvester/e2e/fixtures"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/apply"
	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/upstream"
	"github.com/harvester/docker-machine-driver-harvester/e2e/virtcontroller"
)

// Options configures Start. The zero value gives the default bed.
type Options struct {
	// ControlPlane options; its BeforeControllerManager is set by Start (it installs the CRDs).
	ControlPlane controlplane.Options
	// Fixtures to seed; nil means fixtures.Default().
	Fixtures *fixtures.Spec
	// StandIn options (latencies, workers).
	StandIn standin.Options
	// NoStandIn starts the bed without the controllers (KubeVirt's VM and VMI controllers and the stand-in):
	// VMs then never progress. Start them later with StartStandIn.
	NoStandIn bool
	// Logf receives progress lines of all parts; nil discards them.
	Logf func(format string, args ...any)
}

// Bed is a running simulated Harvester.
type Bed struct {
	ControlPlane *controlplane.ControlPlane
	// Admission is KubeVirt's VirtualMachine admission, which every VM create and update passes through.
	Admission *admission.Webhook
	// HarvesterAdmission is Harvester's VirtualMachine validator, which every VM create and update (status
	// updates included) passes through, and its VirtualMachine mutator, which mutates every VM create and update
	// (with the Settings the fixtures seed: overcommit-config and the others it reads).
	HarvesterAdmission *admission.Webhook
	// VMController is KubeVirt's VirtualMachine and VMI controllers; StandIn plays the rest. Both are nil when started with
	// NoStandIn or after StopStandIn.
	VMController *virtcontroller.Controller
	StandIn      *standin.StandIn
	// Seeded reports what seeding produced (image storage class names).
	Seeded *fixtures.Seeded
	// KubeconfigPath is a file holding the admin kubeconfig (removed by Stop).
	KubeconfigPath string
	// Admin clients.
	Kube    kubernetes.Interface
	Virt    kubevirt.Interface
	Dynamic dynamic.Interface

	opts         Options
	kubevirtTool string
}

// Start brings up the whole bed; on error nothing is left running. Callers need not bound it: building the
// servers on a first run is not bounded (it may take tens of minutes), their start-up is (a few minutes).
func Start(ctx context.Context, opts Options) (b *Bed, err error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	cpOpts := opts.ControlPlane
	if cpOpts.Logf == nil {
		cpOpts.Logf = opts.Logf
	}
	// Upstream manifests and the tools come first: a first run downloads modules and builds the tools.
	manifests, err := upstream.Load(ctx)
	if err != nil {
		return nil, err
	}
	lbPools, err := crds.LoadBalancerIPPools() // mirrored: its module is not in the module cache
	if err != nil {
		return nil, err
	}
	dhcp, err := crds.ManagedDHCP() // mirrored likewise
	if err != nil {
		return nil, err
	}
	manifests = append(append(manifests, lbPools...), dhcp...)
	kubevirtTool, err := upstream.KubeVirtTool(ctx)
	if err != nil {
		return nil, err
	}
	harvesterTool, err := upstream.HarvesterTool(ctx)
	if err != nil {
		return nil, err
	}
	cpOpts.BeforeControllerManager = func(ctx context.Context, admin *rest.Config) error {
		t0 := time.Now()
		if err := crds.Install(ctx, admin, manifests); err != nil {
			return err
		}
		opts.Logf("testbed: CRDs established after %v", time.Since(t0).Round(time.Millisecond))
		return nil
	}
	// Finds (on a first run, builds) the servers, then starts them within cpOpts.StartTimeout.
	cp, err := controlplane.Start(ctx, cpOpts)
	if err != nil {
		return nil, err
	}
	// The rest of the start-up (clients, seeding, the stand-in) gets a bound of its own.
	ctx, cancel := context.WithTimeout(ctx, controlplane.DefaultStartTimeout)
	defer cancel()
	started := &Bed{ControlPlane: cp, opts: opts, kubevirtTool: kubevirtTool}
	b = started
	defer func() {
		if err != nil {
			started.Stop() // not b: `return nil, err` has set it to nil by now
			b = nil
		}
	}()
	admin := cp.AdminConfig()
	if b.Kube, err = kubernetes.NewForConfig(admin); err != nil {
		return nil, err
	}
	if b.Virt, err = kubevirt.NewForConfig(admin); err != nil {
		return nil, err
	}
	if b.Dynamic, err = dynamic.NewForConfig(admin); err != nil {
		return nil, err
	}
	b.KubeconfigPath = filepath.Join(cp.Dir(), "admin.kubeconfig")
	if err = os.WriteFile(b.KubeconfigPath, cp.AdminKubeconfig(), 0o600); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if b.Admission, err = admission.Start(ctx, admission.Options{Tool: kubevirtTool, Dir: cp.Dir(), Kubeconfig: b.KubeconfigPath}); err != nil {
		return nil, fmt.Errorf("start KubeVirt's admission: %w", err)
	}
	if err = b.Admission.Register(ctx, admin); err != nil {
		return nil, fmt.Errorf("register KubeVirt's admission: %w", err)
	}
	opts.Logf("testbed: KubeVirt's VirtualMachine admission serving on %s after %v", b.Admission.URL, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	// Registered after KubeVirt's, so KubeVirt's probe (a VM without memory, which Harvester's validator refuses
	// too) met KubeVirt's webhook alone.
	if b.HarvesterAdmission, err = admission.StartHarvester(ctx, admission.Options{Tool: harvesterTool, Dir: cp.Dir(), Kubeconfig: b.KubeconfigPath}); err != nil {
		return nil, fmt.Errorf("start Harvester's VirtualMachine validator and mutator: %w", err)
	}
	if err = b.HarvesterAdmission.Register(ctx, admin); err != nil {
		return nil, fmt.Errorf("register Harvester's VirtualMachine validator: %w", err)
	}
	if err = b.HarvesterAdmission.RegisterMutator(ctx, admin); err != nil {
		return nil, fmt.Errorf("register Harvester's VirtualMachine mutator: %w", err)
	}
	opts.Logf("testbed: Harvester's VirtualMachine validator and mutator serving on %s after %v", b.HarvesterAdmission.URL, time.Since(t0).Round(time.Millisecond))

	spec := fixtures.Default()
	if opts.Fixtures != nil {
		spec = *opts.Fixtures
	}
	t0 = time.Now()
	if b.Seeded, err = fixtures.Seed(ctx, admin, spec); err != nil {
		return nil, fmt.Errorf("seed the Harvester fixtures: %w", err)
	}
	opts.Logf("testbed: fixtures seeded after %v", time.Since(t0).Round(time.Millisecond))
	// Harvester's KubeVirt resource, before KubeVirt's controllers start (they keep it) and also in a bed without
	// them: Harvester's VM mutator refuses a VM with memory without it.
	kv, err := applyKubeVirt(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("create Harvester's KubeVirt resource: %w", err)
	}
	// Harvester's webhook reads them from informers (hack/tools/harvester store.go): the first VM of a test must
	// not meet a mutator that does not have them yet.
	if err = b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, admission.KubeVirts, kv.GetNamespace(), kv.GetName()); err != nil {
		return nil, err
	}
	for _, st := range spec.Settings {
		if err = b.HarvesterAdmission.AwaitHeld(ctx, b.Dynamic, admission.Settings, "", st.Name); err != nil {
			return nil, err
		}
	}
	if !opts.NoStandIn {
		if err = b.StartStandIn(ctx); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// applyKubeVirt applies Harvester's KubeVirt resource (upstream.HarvesterKubeVirt) and returns it as applied.
func applyKubeVirt(ctx context.Context, admin *rest.Config) (*unstructured.Unstructured, error) {
	kv, err := upstream.HarvesterKubeVirt(ctx)
	if err != nil {
		return nil, err
	}
	a, err := apply.New(admin)
	if err != nil {
		return nil, err
	}
	return a.Apply(ctx, kv)
}

// StartStandIn starts KubeVirt's VM and VMI controllers and the stand-in controllers (after NoStandIn or
// StopStandIn).
func (b *Bed) StartStandIn(ctx context.Context) error {
	if b.StandIn != nil {
		return fmt.Errorf("the stand-in is already running")
	}
	t0 := time.Now()
	// KubeVirt's VM and VMI controllers; the stand-in plays kube-scheduler, kubelet and virt-handler around them.
	vmc, err := virtcontroller.Start(ctx, virtcontroller.Options{Tool: b.kubevirtTool, Dir: b.ControlPlane.Dir(),
		Kubeconfig: b.KubeconfigPath, VMI: true})
	if err != nil {
		return err
	}
	b.opts.Logf("testbed: KubeVirt's VM and VMI controllers running after %v", time.Since(t0).Round(time.Millisecond))
	so := b.opts.StandIn
	if so.Logf == nil {
		so.Logf = b.opts.Logf
	}
	s, err := standin.Start(ctx, b.ControlPlane.AdminConfig(), so)
	if err != nil {
		vmc.Stop()
		return fmt.Errorf("start the stand-in controllers: %w", err)
	}
	b.VMController, b.StandIn = vmc, s
	return nil
}

// StopStandIn stops the stand-in and KubeVirt's controllers; VMs keep their state and stop
// progressing.
func (b *Bed) StopStandIn() {
	if b.StandIn != nil {
		b.StandIn.Stop()
		b.StandIn = nil
	}
	b.VMController.Stop()
	b.VMController = nil
}

// Stop stops the stand-in, the admission servers and the control plane, and removes their files.
func (b *Bed) Stop() {
	b.StopStandIn()
	b.Admission.Stop()
	b.HarvesterAdmission.Stop()
	if b.ControlPlane != nil {
		b.ControlPlane.Stop()
	}
}

// Logs returns the last n lines of each server's log, for failure messages.
func (b *Bed) Logs(n int) string {
	return b.ControlPlane.Logs(n) + b.Admission.Logs(n) + b.HarvesterAdmission.Logs(n) + b.VMController.Logs(n)
}

// AdminConfig returns a fresh admin client configuration.
func (b *Bed) AdminConfig() *rest.Config { return b.ControlPlane.AdminConfig() }

// AdminKubeconfig returns the admin kubeconfig.
func (b *Bed) AdminKubeconfig() []byte { return b.ControlPlane.AdminKubeconfig() }

// Credential issues a service-account identity (see package credential), with this bed's admin rights.
func (b *Bed) Credential(ctx context.Context, spec credential.Spec) (*credential.Credential, error) {
	return credential.Issue(ctx, b.AdminConfig(), spec)
}
