package config

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rancher/machine/libmachine/drivers"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// Disk performance: each disk's I/O mode and dedicated I/O thread (the io and dedicatedIOThread keys of a
// --harvester-disk-info entry) and the VM's block multi-queue and I/O threads. The keys, flags and rules are
// those of the reference driver's work in progress (harvester/docker-machine-driver-harvester
// harvester/storageperformance.go at 6092ec41: checkDiskPerformance, checkIOThreads), so a machine config
// written for it is read the same here, and KubeVirt's admitter's: what it refuses is refused here, named by
// flag, before anything is made.

var (
	// diskIOModes are the I/O modes KubeVirt's admitter accepts (kubevirt/kubevirt pkg/storage/admitters/disks.go,
	// validateIOMode; kubevirt.io/api core/v1 DriverIO).
	diskIOModes = []kubevirtv1.DriverIO{kubevirtv1.IONative, kubevirtv1.IOThreads}
	// ioThreadsPolicies are the policies it accepts (pkg/virt-api/webhooks/validating-webhook/admitters/
	// vmi-create-admitter.go, validIOThreadsPolicies).
	ioThreadsPolicies = []kubevirtv1.IOThreadsPolicy{kubevirtv1.IOThreadsPolicyShared, kubevirtv1.IOThreadsPolicyAuto, kubevirtv1.IOThreadsPolicySupplementalPool}
)

// diskIOFromJSON reads the io and dedicatedIOThread of the entry at path into d, whose bus, type and cache are
// read already.
func diskIOFromJSON(p *Problems, path string, dj diskJSON, d *Disk) {
	d.IO, d.DedicatedIOThread = dj.IO, dj.DedicatedIOThread
	if d.CDROM {
		// As the reference refuses them; a CD-ROM is never on virtio, which a dedicated thread needs.
		if d.IO != "" || d.DedicatedIOThread {
			p.Addf(FlagDiskInfo, "%s is a cd-rom: io and dedicatedIOThread are for disks of type disk", path)
		}
		return
	}
	if d.IO != "" && !slices.Contains(diskIOModes, kubevirtv1.DriverIO(d.IO)) {
		p.Addf(FlagDiskInfo, "%s.io must be one of %s (KubeVirt's disk I/O modes), or empty for KubeVirt's choice, got %q", path, lists.Or(diskIOModes), dj.IO)
	} else if d.IO == string(kubevirtv1.IONative) && d.Cache != string(kubevirtv1.CacheNone) {
		// Native AIO needs the disk opened with O_DIRECT, which libvirt does only for cache none (KubeVirt itself
		// picks native only then: pkg/virt-launcher/virtwrap/converter/converter.go, SetOptimalIOMode).
		p.Addf(FlagDiskInfo, "%s.io native needs cache none (native I/O bypasses the host's page cache, which writethrough and writeback use), got cache %q", path, dj.Cache)
	}
	if d.DedicatedIOThread && d.Bus != string(kubevirtv1.DiskBusVirtio) {
		// pkg/storage/admitters/disks.go, validateBusSupport: "IOThreads are not supported for disks on a … bus".
		p.Addf(FlagDiskInfo, "%s.dedicatedIOThread needs bus virtio: KubeVirt gives I/O threads to virtio disks only, got bus %q", path, d.Bus)
	}
}

// parseDiskIO reads --harvester-block-multi-queue, --harvester-io-threads-policy and --harvester-io-thread-count.
// A thread count goes with the supplementalPool policy and that policy with a count: KubeVirt's admitter refuses
// the policy without one ("the number of iothreads needs to be set and positive", validateIOThreadsPolicy), and
// the reference refuses a count without the policy.
func parseDiskIO(p *Problems, opts drivers.DriverOptions) DiskIO {
	io := DiskIO{BlockMultiQueue: opts.Bool(FlagBlockMultiQueue)}
	raw, rawCount := opts.String(FlagIOThreadsPolicy), opts.String(FlagIOThreadCount)
	policy, pool := kubevirtv1.IOThreadsPolicy(strings.TrimSpace(raw)), kubevirtv1.IOThreadsPolicySupplementalPool
	known := policy == "" || slices.Contains(ioThreadsPolicies, policy)
	if known {
		io.ThreadsPolicy = policy
	} else {
		p.Addf(FlagIOThreadsPolicy, "must be one of %s (KubeVirt's I/O threads policies), or empty for none, got %q", lists.Or(ioThreadsPolicies), raw)
	}
	count, err := strconv.ParseUint(orDefault(strings.TrimSpace(rawCount), "0"), 10, 32)
	switch {
	case err != nil:
		p.Addf(FlagIOThreadCount, "must be a whole number of threads from 0 to %d (0 or empty: none), got %q", uint32(math.MaxUint32), rawCount)
	case count > 0 && known && policy != pool:
		p.Addf(FlagIOThreadCount, "needs --%s %s: it is the size of that policy's pool of I/O threads, which the other policies do not have", FlagIOThreadsPolicy, pool)
	case count == 0 && policy == pool:
		p.Addf(FlagIOThreadsPolicy, "%s needs --%s: KubeVirt refuses a supplemental pool without its number of threads (1 or more)", pool, FlagIOThreadCount)
	default:
		io.PoolThreads = uint32(count)
	}
	return io
}
