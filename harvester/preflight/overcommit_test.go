package preflight

import (
	"math"
	"math/big"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// machineOf is machine m1's objects as objects.ParseConfig builds them from the minimal flags and kv.
func machineOf(t *testing.T, kv ...any) *objects.Machine {
	t.Helper()
	_, m, err := objects.ParseConfig("m1", configtest.With(configtest.MinimalOptions(), kv...))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The requests Harvester's mutator writes (mutator.go patchResourceOvercommit, generateMemoryPatch), for the
// overcommit percentages, dedicated CPUs, host devices and reserved memory, of the VM the flags (or a VM patch)
// make. e2e/scenarios TestQuotaRequestsAsHarvesterMutates checks the same figures against the mutator itself.
func TestVMRequests(t *testing.T) {
	harvesterDefault := overcommit{CPU: 1000, Memory: 150}
	vgpu := `{"vGPURequests":[{"name":"gpu1","deviceName":"nvidia.com/NVIDIA_A2-2Q"}]}`
	size := func(cpus, gib int, kv ...any) []any {
		return append([]any{config.FlagCPUCount, cpus, config.FlagMemorySize, gib}, kv...)
	}
	for _, tc := range []struct {
		name     string
		flags    []any
		oc       overcommit
		cpu, mem string
		exact    bool
	}{
		{"Harvester's default", size(2, 4), harvesterDefault, "200m", "2730Mi", true},
		{"no overcommit", size(2, 4), overcommit{CPU: 100, Memory: 100}, "2", "4Gi", true},
		{"millicores truncated", size(3, 5), overcommit{CPU: 700, Memory: 130}, "428m", "3938Mi", true},
		{"reserved memory alone changes nothing", size(2, 4, config.FlagReservedMemorySize, 512), harvesterDefault, "200m", "2730Mi", true},
		{"dedicated CPUs", size(2, 4, config.FlagCPUPinning, true, config.FlagReservedMemorySize, 512), harvesterDefault, "2", "4Gi", true},
		{"vGPU, reserved memory", size(2, 4, config.FlagReservedMemorySize, 256, config.FlagVGPUInfo, vgpu), harvesterDefault, "200m", "3840Mi", true},
		{"vGPU, default reservation at most", size(2, 4, config.FlagVGPUInfo, vgpu), harvesterDefault, "200m", "3996Mi", false},
		// The patch wins: the VM's limits are what it sets.
		{"patched memory", size(2, 16, config.FlagVMPatch, `{"spec":{"template":{"spec":{"domain":{"resources":{"limits":{"memory":"2Gi"}}}}}}}`),
			overcommit{CPU: 100, Memory: 100}, "2", "2Gi", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu, mem, exact := vmRequests(vmResourcesOf(machineOf(t, tc.flags...)), tc.oc)
			if cpu.String() != tc.cpu || mem.String() != tc.mem || exact != tc.exact {
				t.Errorf("vmRequests = %s, %s, exact %v; want %s, %s, exact %v", &cpu, &mem, exact, tc.cpu, tc.mem, tc.exact)
			}
		})
	}
}

// vmRequests at the bounds of its inputs equals the mutator's arithmetic done in integers without bound:
// limit × 100 / percent, the memory truncated to whole MiB.
func TestVMRequestsAtTheBounds(t *testing.T) {
	machines := map[[2]int]*objects.Machine{}
	for _, gib := range []int{1, 85899345, 85899346, config.MaxGiB} {
		for _, cpus := range []int{1, config.MaxCPUs} {
			machines[[2]int{cpus, gib}] = machineOf(t, config.FlagCPUCount, cpus, config.FlagMemorySize, gib)
		}
	}
	for _, gib := range []int{1, 85899345, 85899346, config.MaxGiB} {
		for _, cpus := range []int{1, config.MaxCPUs} {
			for _, oc := range []overcommit{{CPU: 100, Memory: 100}, {CPU: 1000, Memory: 150}, {CPU: 101, Memory: 101}, {CPU: math.MaxInt64, Memory: math.MaxInt64}} {
				cpu, mem, _ := vmRequests(vmResourcesOf(machines[[2]int{cpus, gib}]), oc)
				wantMem := new(big.Int).Mul(big.NewInt(int64(gib)<<30), big.NewInt(100))
				wantMem.Quo(wantMem, big.NewInt(oc.Memory)).Rsh(wantMem, 20).Lsh(wantMem, 20)
				wantCPU := new(big.Int).Mul(big.NewInt(int64(cpus)*1000*100), big.NewInt(1))
				wantCPU.Quo(wantCPU, big.NewInt(oc.CPU))
				if mem.Sign() < 0 || mem.Value() != wantMem.Int64() || cpu.MilliValue() != wantCPU.Int64() {
					t.Errorf("%d GiB, %d cores, overcommit %+v: requests %s and %s, want %s bytes and %sm", gib, cpus, oc, &cpu, &mem, wantMem, wantCPU)
				}
			}
		}
	}
}
