package preflight

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// MaxPoolSize is the most machines the pre-flight checks at once (Input.Machines). Rancher sets no limit on a
// pool's quantity; this one bounds the pre-flight's work (the IP pool's scan stops after that many addresses) and
// keeps every scaled amount far from overflowing.
const MaxPoolSize = 1000

// A pool of n machines of one configuration asks n times what one machine asks: each of its machines is a VM with
// the same disks, cores, memory, devices and an address of its own. Rancher's machine-config form checks less:
// only vGPUs, and a vGPU type once per machine however many requests of it a machine makes — it sums the pool's
// quantity over the pools that ask for the type and compares that with the type's allocatable count
// (rancher/dashboard pkg/harvester-manager/machine-config/harvester.vue, validatorVGpus). The pre-flight counts
// every request, of vGPUs and host devices alike, times n (Input.Machines).

// machineCount is how many machines the pre-flight checks at once: 1 unless in asks for more.
func machineCount(in *Input) int {
	return max(1, in.Machines)
}

// whoNeeds starts a quota message's need: "the machine needs", or "3 machines need".
func whoNeeds(in *Input) string {
	if n := machineCount(in); n > 1 {
		return fmt.Sprintf("%d machines need", n)
	}
	return "the machine needs"
}

// scaleNeeds is needs for n machines: every amount times n, what makes it up saying so.
func scaleNeeds(needs map[corev1.ResourceName]quotaNeed, n int) map[corev1.ResourceName]quotaNeed {
	if n <= 1 {
		return needs
	}
	out := make(map[corev1.ResourceName]quotaNeed, len(needs))
	for res, need := range needs {
		amount := need.amount.DeepCopy()
		amount.Mul(int64(n))
		out[res] = quotaNeed{amount: amount, flag: need.flag, what: fmt.Sprintf("%d times %s", n, need.what)}
	}
	return out
}
