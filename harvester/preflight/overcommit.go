package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// overcommitSetting is the Harvester setting from which its VM mutator derives a VM's requests.
const overcommitSetting = "overcommit-config"

// overcommit is the overcommit-config setting's value: how many percent of the limits Harvester overcommits
// (harvester/harvester pkg/settings Overcommit; default {"cpu":1000,"memory":150,"storage":100}).
type overcommit struct {
	CPU    int64 `json:"cpu"`
	Memory int64 `json:"memory"`
}

// readOvercommit reads the overcommit-config setting, one read from the API server's watch cache. It answers why
// the requests cannot be known when they cannot: the credential may not read it; it is missing or empty (the
// mutator then sets no requests, mutator.go getOvercommit, and what the virt-launcher pod requests is up to
// KubeVirt); or it holds no usable percentages: whole numbers of at least 100, as Harvester's setting validator
// requires ("Cannot undercommit": pkg/webhook/resources/setting/validator.go, validateOvercommitConfigHelper).
// An error is any other failure of the read.
func readOvercommit(ctx context.Context, c kube.Interface) (overcommit, string, error) {
	s, err := kube.GetCached(ctx, c, kube.Settings, "", overcommitSetting)
	switch {
	case apierrors.IsNotFound(err):
		return overcommit{}, fmt.Sprintf("Harvester has no setting %s: CPU and memory requests not checked", overcommitSetting), nil
	case apierrors.IsForbidden(err):
		return overcommit{}, fmt.Sprintf("the credential may not get setting %s: CPU and memory requests not checked", overcommitSetting), nil
	case err != nil:
		return overcommit{}, "", err
	}
	value := s.Effective()
	var oc overcommit
	if err := json.Unmarshal([]byte(value), &oc); err != nil || oc.CPU < 100 || oc.Memory < 100 {
		return overcommit{}, fmt.Sprintf("setting %s holds no usable percentages (%s): CPU and memory requests not checked", overcommitSetting, quoteShort(value)), nil
	}
	return oc, "", nil
}

// memory100Mi is what Harvester's mutator reserves of a VM's memory for QEMU by default (mutator.go memory100M).
const memory100Mi = 100 << 20

// vmRequests computes the CPU and memory requests Harvester's VM mutator writes on the machine's VM, of its
// limits res, as harvester/harvester pkg/webhook/resources/virtualmachine/mutator.go does (v1.8.2,
// patchResourceOvercommit and generateMemoryPatch):
//
//   - CPU: the limit in millicores × 100 / overcommit cpu (integer division); with dedicated CPUs the limit.
//   - Memory: the limit × 100 / overcommit memory, truncated to whole MiB; with dedicated CPUs the limit; with
//     host devices or vGPUs the guest memory, the limit less the reserved memory — the VM's
//     harvesterhci.io/reservedMemory (--harvester-reserved-memory-size) when it has one, else 100 MiB, or nothing
//     when the additional-guest-memory-overhead-ratio setting is set (the driver does not read it: the lower
//     figure, limit − 100 MiB, is taken, and exact is false).
//
// The product limit × 100 takes up to 70 bits for the largest memory; it is computed in 128 (percentOf), so the
// request is what the mutator means. The mutator itself multiplies in an int64, which wraps from 85899346 GiB of
// memory (2^63 / 100 bytes): there its request is no request at all. res's limits are set and counted
// (vmResourcesOf: in a quantity's range, not negative, at most config.MaxCPUs cores).
func vmRequests(res vmResources, oc overcommit) (cpu, memory resource.Quantity, exact bool) {
	limitMilli := res.cpu.MilliValue() // at most 2^32 × 1000
	limitMem := res.memory.Value()
	exact = true
	cpuMilli, mem := percentOf(limitMilli, oc.CPU), percentOf(limitMem, oc.Memory)>>20<<20
	switch {
	case res.pinned:
		cpuMilli, mem = limitMilli, limitMem
	case res.devices:
		reserved := int64(0)
		if res.reserved != nil {
			reserved = res.reserved.Value()
		}
		if reserved == 0 {
			reserved, exact = memory100Mi, false
		}
		mem = max(0, limitMem-reserved)
	}
	return *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI), *resource.NewQuantity(mem, resource.BinarySI), exact
}

// percentOf is limit × 100 / percent without overflow, for limit ≥ 0 and percent ≥ 100 (readOvercommit): the
// product is held in 128 bits, and the quotient is at most limit.
func percentOf(limit, percent int64) int64 {
	hi, lo := bits.Mul64(uint64(limit), 100)
	q, _ := bits.Div64(hi, lo, uint64(percent)) // hi < 100 ≤ percent: the quotient fits
	return int64(q)
}

// quoteShort quotes s, cut to its first 64 bytes: a value from the cluster, of any length, in a message.
func quoteShort(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return fmt.Sprintf("%q", s)
}
