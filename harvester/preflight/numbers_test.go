package preflight

import (
	"math"
	"math/big"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Device counts that together pass an int64 add up to its largest, not to a negative.
func TestDeviceCountsPassingAnInt64(t *testing.T) {
	huge := func(name string) corev1.Node {
		n := kubefake.HostNode(name, nil)
		n.Status.Allocatable[kubefake.GPUResource] = resource.MustParse("9223372036854775807")
		return n
	}
	u := deviceUse([]corev1.Node{huge("node1"), huge("node2")}, nil)
	if got := u.free(kubefake.GPUResource); got != math.MaxInt64 {
		t.Errorf("free of two hosts of 2^63−1: %d", got)
	}
	if msg := u.shortage(kubefake.GPUResource, 1); msg != "" {
		t.Errorf("one device of 2^63−1 free refused: %s", msg)
	}
}

// What the machine adds to a quota at the largest sizes the flags take, for the largest pool: disks of
// config.MaxGiB each, config.MaxCPUs cores, MaxPoolSize machines. The sums pass an int64; Quantity's arithmetic
// goes on exactly (in an inf.Dec), so the need is the true figure, never wrapped.
func TestQuotaNeedsAtTheBounds(t *testing.T) {
	m := machineOf(t, config.FlagCPUCount, config.MaxCPUs, config.FlagMemorySize, config.MaxGiB,
		config.FlagDiskInfo, `{"disks":[{"imageName":"default/ubuntu","size":8589934591},{"storageClassName":"longhorn","size":8589934591}]}`)
	m, err := m.Complete(objects.Facts{ImageStorageClasses: map[config.Ref]string{{Namespace: "default", Name: "ubuntu"}: "longhorn-ubuntu"}}, objects.Draw{ClaimSuffix: "abcde"})
	if err != nil {
		t.Fatal(err)
	}
	needs := scaleNeeds(quotaNeeds(m, vmResourcesOf(m)), MaxPoolSize)
	maxBytes := new(big.Int).Lsh(big.NewInt(config.MaxGiB), 30)
	for res, want := range map[corev1.ResourceName]*big.Int{
		corev1.ResourceRequestsStorage:                                 new(big.Int).Mul(maxBytes, big.NewInt(2*MaxPoolSize)),
		"longhorn-ubuntu.storageclass.storage.k8s.io/requests.storage": new(big.Int).Mul(maxBytes, big.NewInt(MaxPoolSize)),
		corev1.ResourceLimitsMemory:                                    new(big.Int).Mul(maxBytes, big.NewInt(MaxPoolSize)),
		corev1.ResourceLimitsCPU:                                       big.NewInt(int64(config.MaxCPUs) * MaxPoolSize),
		corev1.ResourcePods:                                            big.NewInt(MaxPoolSize),
	} {
		got := needs[res].amount
		if got.Cmp(resource.MustParse(want.String())) != 0 {
			t.Errorf("%s: need %s, want %s", res, &got, want)
		}
	}
}
