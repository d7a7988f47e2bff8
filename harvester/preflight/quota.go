package preflight

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// QuotaAccess is what the quota's check reads. It is not asked for in the access review: a credential without it
// is not blocked (the check, or its CPU and memory requests, are skipped).
var QuotaAccess = []kube.Access{
	{Resource: "resourcequotas", Verb: "list"},
	{Group: kube.HarvesterGroupVersion.Group, Resource: "settings", Verb: "get", Name: overcommitSetting, ClusterScoped: true},
}

// quotaNeed is what the machine certainly adds to one quota resource, and the flag that decides it.
type quotaNeed struct {
	amount resource.Quantity
	flag   string
	what   string // what makes up the amount, for the message
}

// quotaNeeds is what creating the machine certainly adds to the resources a ResourceQuota in its namespace can
// limit, read from its objects (m): only lower bounds, so that a quota is blamed only when the machine cannot fit.
//
//   - Storage: one PVC per claim of the VM, of the claim's size (the VM's volumeClaimTemplates annotation, which
//     Harvester's VM controller makes the PVCs from; no patch changes it), also per storage class
//     (<class>.storageclass.storage.k8s.io/…) when the class is known. A persistent TPM's state volume is not
//     counted: KubeVirt sizes and makes it (backend storage), not the driver.
//   - Objects: the VM, its VMI, the virt-launcher pod that runs it, the cloud-init Secret.
//   - CPU and memory limits of the virt-launcher pod: KubeVirt gives its compute container the VM's
//     domain.resources.limits — the cores and memory of the flags, or of --harvester-vm-patch — and adds its
//     launcher overhead to the memory limit (kubevirt/kubevirt pkg/virt-controller/services/renderresources.go);
//     the overhead is not counted here, since it depends on the VM's devices and KubeVirt's version, so the
//     memory need is a lower bound.
//
// CPU and memory requests are requestNeeds: they need the overcommit-config setting.
func quotaNeeds(m *objects.Machine, res vmResources) map[corev1.ResourceName]quotaNeed {
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
	for _, claim := range m.Claims {
		size := claim.PVC.Spec.Resources.Requests[corev1.ResourceStorage]
		flag := claim.Disk.Flag // --harvester-disk-info, where each disk has its size; else the single disk's size flag
		if flag != config.FlagDiskInfo {
			flag = config.FlagDiskSize
		}
		add(corev1.ResourceRequestsStorage, size, flag, "the sum of its disks' sizes")
		for _, res := range []corev1.ResourceName{corev1.ResourcePersistentVolumeClaims, "count/persistentvolumeclaims"} {
			add(res, one, flag, "one volume per disk")
		}
		if class := claim.Class(); claim.ClassKnown && class != "" {
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
	if res.cpu != nil {
		add(corev1.ResourceLimitsCPU, *res.cpu, res.cpuFlag, "its cores"+patched(res.cpuFlag))
	}
	if res.memory != nil {
		add(corev1.ResourceLimitsMemory, *res.memory, res.memoryFlag, "its memory"+patched(res.memoryFlag)+", before KubeVirt's overhead")
	}
	return needs
}

// patched says, after what a need is made of, that --harvester-vm-patch set it (flag).
func patched(flag string) string {
	if flag == config.FlagVMPatch {
		return ", set by the VM patch"
	}
	return ""
}

// requestResources are the quota resources of CPU and memory requests.
var requestResources = []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourceCPU, corev1.ResourceRequestsMemory, corev1.ResourceMemory}

// requestNeeds adds to needs the CPU and memory requests Harvester's VM mutator gives the machine's VM under
// overcommit oc (vmRequests); KubeVirt gives the virt-launcher pod's compute container those requests and adds its
// overhead to the memory request, so they are lower bounds of what the pod counts.
func requestNeeds(needs map[corev1.ResourceName]quotaNeed, res vmResources, oc overcommit) {
	cpu, mem, exact := vmRequests(res, oc)
	cpuWhat := fmt.Sprintf("its CPU request: %s cores × 100 / overcommit-config cpu %d", quantity(*res.cpu), oc.CPU)
	memWhat := fmt.Sprintf("its memory request: %s × 100 / overcommit-config memory %d, in whole MiB", quantity(*res.memory), oc.Memory)
	switch {
	case res.pinned:
		cpuWhat, memWhat = "its dedicated cores", "its memory: dedicated CPUs are not overcommitted"
	case res.devices:
		memWhat = fmt.Sprintf("its guest memory, %s less %s reserved: a VM with host devices is not overcommitted", quantity(*res.memory), quantity(ptr.Deref(res.reserved, resource.Quantity{})))
		if !exact {
			memWhat = fmt.Sprintf("its guest memory, %s less at most 100Mi reserved: a VM with host devices is not overcommitted", quantity(*res.memory))
		}
	}
	for _, r := range requestResources[:2] {
		needs[r] = quotaNeed{amount: cpu, flag: res.cpuFlag, what: cpuWhat}
	}
	for _, r := range requestResources[2:] {
		needs[r] = quotaNeed{amount: mem, flag: res.memoryFlag, what: memWhat}
	}
}

// limitsRequests reports whether an unscoped quota of quotas limits CPU or memory requests.
func limitsRequests(quotas []corev1.ResourceQuota) bool {
	for _, q := range quotas {
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			continue
		}
		for _, res := range requestResources {
			if _, ok := q.Status.Hard[res]; ok {
				return true
			}
		}
	}
	return false
}

// checkQuota makes sure the machine fits every ResourceQuota of its namespace: for each resource the machine
// certainly adds to (quotaNeeds), what the quota has left (status.hard − status.used, as the quota controller
// counted it) must hold it; otherwise Kubernetes would refuse a PVC, the VMI's pod or an object midway, and the
// VM would wait until the timeout. One list of resourcequotas in the namespace and, only when a quota limits CPU or
// memory requests, one read of the overcommit-config setting (requestNeeds), both from the API server's watch
// cache (QuotaAccess); it creates nothing. A credential that may not list the quotas or read the setting is not
// blocked (the check, or its requests, are skipped). Quotas with scopes (they select pods by QoS,
// priority class, …) are left out: whether the launcher pod falls in them depends on Harvester's mutations.
//
// The list is made at once; then it waits for the images' lookup, whose storage classes the per-class figures
// need (the machine it completed).
func checkQuota(ctx context.Context, r *run) {
	ns := r.cfg.Namespace
	quotas, err := kube.List(ctx, r.c, kube.ResourceQuotas, ns, metav1.ListOptions{ResourceVersion: kube.FromCache})
	switch {
	case apierrors.IsForbidden(err):
		r.u.addf("the credential may not list resourcequotas in namespace %s: cannot tell whether the machine fits its quotas", ns)
		return
	case err != nil:
		r.p.Addf("", "%v", r.c.Explain("list the resource quotas of namespace", ns, err))
		return
	}
	// The setting is read only when a quota limits requests, while the images' lookup goes on.
	var oc overcommit
	requestsKnown := false
	if limitsRequests(quotas) {
		var why string
		if oc, why, err = readOvercommit(ctx, r.c); err != nil {
			r.p.Addf("", "%v", r.c.Explain("get the Harvester setting", overcommitSetting, err))
			return
		}
		if why != "" {
			r.u.addf("%s", why)
		}
		requestsKnown = why == ""
	}
	m := r.machine()
	res := vmResourcesOf(m)
	if res.unreadable != "" {
		r.u.addf("%s: its CPU and memory not checked", res.unreadable)
	}
	needs := quotaNeeds(m, res)
	if requestsKnown && res.cpu != nil && res.memory != nil {
		requestNeeds(needs, res, oc)
	}
	needs = scaleNeeds(needs, machineCount(r.in))
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
				r.u.addf("resource quota %s has not counted %s yet", q.Name, res)
				continue
			}
			if why := quotaAmountsProblem(res, hard, used); why != "" {
				r.u.addf("resource quota %s: %s: not checked", q.Name, why)
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
			r.p.Addf(need.flag, "resource quota %s in namespace %s: %s has %s free (%s of %s used), %s %s (%s); "+
				"free some of it, raise the quota, or make the machine smaller", q.Name, ns, res, quantity(free), quantity(used), quantity(hard),
				whoNeeds(r.in), quantity(need.amount), need.what)
		}
	}
}

// quotaAmountsProblem says what of a quota's hard and used amounts of res no quota can hold, or "": beyond what
// a Quantity holds (kube.QuantityInRange), or negative, which the API server refuses in a quota
// (k8s.io/kubernetes pkg/apis/core/validation, ValidateResourceQuantityValue). Their form was bounded when the
// quota was read (kube's guard); these are the bounds of the arithmetic that follows.
func quotaAmountsProblem(res corev1.ResourceName, hard, used resource.Quantity) string {
	for _, a := range []struct {
		field  string
		amount resource.Quantity
	}{{"status.hard", hard}, {"status.used", used}} {
		if err := kube.QuantityInRange(a.amount); err != nil {
			return fmt.Sprintf("%s[%s] %v", a.field, res, err)
		}
		if a.amount.Sign() < 0 {
			return fmt.Sprintf("%s[%s] %s is negative, which Kubernetes refuses in a quota", a.field, res, quantity(a.amount))
		}
	}
	return ""
}

// quantity prints a quantity in its canonical form (10Gi, 2, 500m).
func quantity(q resource.Quantity) string {
	return fmt.Sprint(&q)
}
