package harvester

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// quotaNeed is what the machine certainly adds to one quota resource, and the flag that decides it.
type quotaNeed struct {
	amount resource.Quantity
	flag   string
	what   string // what makes up the amount, for the message
}

// quotaNeeds is what creating the machine certainly adds to the resources a ResourceQuota in its namespace can
// limit: only lower bounds, so that a quota is blamed only when the machine cannot fit.
//
//   - Storage: one PVC per disk, of the disk's size (harvester/build volumeClaimTemplates; Harvester's VM
//     controller makes them from the VM's volumeClaimTemplates annotation), also per storage class
//     (<class>.storageclass.storage.k8s.io/…) when the class is known. A persistent TPM's state volume is not
//     counted: KubeVirt sizes and makes it (backend storage), not the driver.
//   - Objects: the VM, its VMI, the virt-launcher pod that runs it, the cloud-init Secret.
//   - CPU and memory limits of the virt-launcher pod: KubeVirt gives its compute container the VM's
//     domain.resources.limits — the cores and memory of the flags — and adds its launcher overhead to the memory
//     limit (kubevirt/kubevirt pkg/virt-controller/services/renderresources.go); the overhead is not counted here,
//     since it depends on the VM's devices and KubeVirt's version, so the memory need is a lower bound.
//   - CPU and memory requests are not counted but in one case: Harvester's VM mutator sets them from the limits
//     and its overcommit-config setting (requests = limits × 100 / overcommit percentage; memory less the reserved
//     memory), which the driver does not read (harvester/harvester pkg/webhook/resources/virtualmachine/mutator.go,
//     patchResourceOvercommit and generateMemoryPatch; default {"cpu":1000,"memory":150}, pkg/settings/settings.go).
//     With dedicated CPUs (--harvester-cpu-pinning) the mutator leaves the CPU request equal to the limit, so
//     requests.cpu (and cpu) count the cores then.
func (d *Driver) quotaNeeds() map[corev1.ResourceName]quotaNeed {
	cfg := d.cfg
	needs := map[corev1.ResourceName]quotaNeed{}
	add := func(res corev1.ResourceName, q resource.Quantity, flag, what string) {
		n, ok := needs[res]
		if !ok {
			n = quotaNeed{amount: *resource.NewQuantity(0, q.Format), flag: flag, what: what}
		}
		n.amount.Add(q)
		needs[res] = n
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	for _, disk := range cfg.Disks {
		size := *resource.NewQuantity(int64(disk.SizeGiB)<<30, resource.BinarySI)
		flag := disk.Flag // --harvester-disk-info, where each disk has its size; else the single disk's size flag
		if flag != config.FlagDiskInfo {
			flag = config.FlagDiskSize
		}
		add(corev1.ResourceRequestsStorage, size, flag, "the sum of its disks' sizes")
		for _, res := range []corev1.ResourceName{corev1.ResourcePersistentVolumeClaims, "count/persistentvolumeclaims"} {
			add(res, one, flag, "one volume per disk")
		}
		if class, _ := d.diskStorageClass(disk); class != "" {
			add(corev1.ResourceName(class+".storageclass.storage.k8s.io/requests.storage"), size, flag, "its disks of storage class "+class)
			add(corev1.ResourceName(class+".storageclass.storage.k8s.io/persistentvolumeclaims"), one, flag, "one volume per disk of storage class "+class)
		}
	}
	for _, res := range []corev1.ResourceName{"count/virtualmachines.kubevirt.io", "count/virtualmachineinstances.kubevirt.io"} {
		add(res, one, config.FlagVMNamespace, "its VM")
	}
	for _, res := range []corev1.ResourceName{corev1.ResourcePods, "count/pods"} {
		add(res, one, config.FlagVMNamespace, "the virt-launcher pod that runs its VM")
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceSecrets, "count/secrets"} {
		add(res, one, config.FlagVMNamespace, "its cloud-init Secret")
	}
	cores := *resource.NewQuantity(int64(cfg.CPUs), resource.DecimalSI)
	add(corev1.ResourceLimitsCPU, cores, config.FlagCPUCount, "its cores")
	add(corev1.ResourceLimitsMemory, *resource.NewQuantity(int64(cfg.MemoryGiB)<<30, resource.BinarySI), config.FlagMemorySize,
		"its memory, before KubeVirt's overhead")
	if cfg.CPUPinning {
		add(corev1.ResourceRequestsCPU, cores, config.FlagCPUCount, "its dedicated cores")
		add(corev1.ResourceCPU, cores, config.FlagCPUCount, "its dedicated cores")
	}
	return needs
}

// checkQuota makes sure the machine fits every ResourceQuota of its namespace: for each resource the machine
// certainly adds to (quotaNeeds), what the quota has left (status.hard − status.used, as the quota controller
// counted it) must hold it; otherwise Kubernetes would refuse a PVC, the VMI's pod or an object midway, and the
// VM would wait until the timeout. One list of resourcequotas in the namespace; it creates nothing. A credential
// that may not list them is not blocked (the check is skipped). Quotas with scopes (they select pods by QoS,
// priority class, …) are left out: whether the launcher pod falls in them depends on Harvester's mutations.
//
// The list is made at once; waitImages returns once the images' storage classes are known (d.looked), which the
// per-class figures need.
func (d *Driver) checkQuota(ctx context.Context, c kube.Interface, p *config.Problems, u *unchecked, waitImages func()) {
	ns := d.cfg.Namespace
	quotas, err := kube.List(ctx, c, kube.ResourceQuotas, ns, metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		u.addf("the credential may not list resourcequotas in namespace %s: cannot tell whether the machine fits its quotas", ns)
		return
	case err != nil:
		p.Addf("", "%v", c.Explain("list the resource quotas of namespace", ns, err))
		return
	}
	waitImages()
	needs := scaleNeeds(d.quotaNeeds(), d.machineCount())
	names := make([]string, 0, len(needs))
	for res := range needs {
		names = append(names, string(res))
	}
	sort.Strings(names)
	sort.Slice(quotas, func(i, j int) bool { return quotas[i].Name < quotas[j].Name })
	for _, q := range quotas {
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			logging.Debugf("Resource quota %s/%s has scopes; not checked", ns, q.Name)
			continue
		}
		for _, name := range names {
			res := corev1.ResourceName(name)
			hard, limited := q.Status.Hard[res]
			if !limited {
				continue
			}
			used, counted := q.Status.Used[res]
			if !counted {
				u.addf("resource quota %s has not counted %s yet", q.Name, res)
				continue
			}
			need := needs[res]
			free := hard.DeepCopy()
			free.Sub(used)
			if free.Cmp(need.amount) >= 0 {
				continue
			}
			if free.Sign() < 0 {
				free = *resource.NewQuantity(0, hard.Format)
			}
			p.Addf(need.flag, "resource quota %s in namespace %s: %s has %s free (%s of %s used), %s %s (%s); "+
				"free some of it, raise the quota, or make the machine smaller", q.Name, ns, res, quantity(free), quantity(used), quantity(hard),
				d.whoNeeds(), quantity(need.amount), need.what)
		}
	}
}

// quantity prints a quantity in its canonical form (10Gi, 2, 500m).
func quantity(q resource.Quantity) string {
	return fmt.Sprint(&q)
}
