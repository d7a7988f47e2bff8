package config

import (
	"fmt"
	"math"
	"slices"

	"github.com/rancher/machine/libmachine/drivers"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/lists"
)

// maxBootOrder is the largest boot order: libvirt reads a device's <boot order='N'/> as an int.
const maxBootOrder = math.MaxInt32

const (
	diskTypeDisk  = "disk"
	diskTypeCDROM = "cd-rom"
	// defaultCDROMBus is a CD-ROM's bus when none is given, as in Harvester's UI: KubeVirt refuses virtio for
	// CD-ROMs (kubevirt/kubevirt pkg/storage/admitters/disks.go, validateBusSupport).
	defaultCDROMBus = "sata"
)

var (
	diskBuses   = []string{"virtio", "scsi", "sata"}
	accessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteOncePod}
	volumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
	// cacheModes are the disk cache modes KubeVirt accepts (kubevirt/kubevirt pkg/storage/admitters/disks.go,
	// validateCacheMode; kubevirt.io/api core/v1 DriverCache).
	cacheModes = []string{string(kubevirtv1.CacheNone), string(kubevirtv1.CacheWriteThrough), string(kubevirtv1.CacheWriteBack)}
)

// diskInfoJSON is the --harvester-disk-info document, as Rancher's Harvester UI writes it.
type diskInfoJSON struct {
	Disks []rawJSON `json:"disks"`
}

// diskJSON is one entry of it. accessMode, volumeMode and cache are this driver's additions; the reference forced
// ReadWriteMany + Block on every disk (rancher/rancher#44529, harvester/harvester#8199). cache is KubeVirt's
// Disk.Cache, named as harvester/terraform-provider-harvester's disk cache_mode is.
type diskJSON struct {
	ImageName        string  `json:"imageName"`
	StorageClassName string  `json:"storageClassName"`
	Size             flexInt `json:"size"`
	BootOrder        flexInt `json:"bootOrder"`
	Bus              string  `json:"bus"`
	Type             string  `json:"type"`
	HotPlugAble      bool    `json:"hotPlugAble"`
	AccessMode       string  `json:"accessMode"`
	VolumeMode       string  `json:"volumeMode"`
	Cache            string  `json:"cache"`
	// IO and DedicatedIOThread are the reference driver's pending disk performance keys (parse_diskio.go).
	IO                string `json:"io"`
	DedicatedIOThread bool   `json:"dedicatedIOThread"`
	// AutoDelete false keeps the disk's volume when the machine is removed, as
	// harvester/terraform-provider-harvester's disk auto_delete does; absent or true deletes it.
	AutoDelete *bool `json:"autoDelete"`
}

// parseDisks reads --harvester-disk-info, or the legacy single-disk flags when it is empty.
func parseDisks(p *Problems, opts drivers.DriverOptions, namespace string) []Disk {
	raw := opts.String(FlagDiskInfo)
	if raw == "" {
		return parseLegacyDisk(p, opts, namespace)
	}
	var doc diskInfoJSON
	disks := decodeEntries(p, FlagDiskInfo, raw, `{"disks":[{"imageName":"ns/image","size":40,...}]}`, &doc,
		"disks", "disk", func() []rawJSON { return doc.Disks },
		func(i int, dj diskJSON) Disk { return diskFromJSON(p, i, dj, namespace) })
	return disks
}

// parseLegacyDisk reads --harvester-image-name, --harvester-disk-size and --harvester-disk-bus: one bootable
// image disk, as the reference driver built it before --harvester-disk-info existed.
func parseLegacyDisk(p *Problems, opts drivers.DriverOptions, namespace string) []Disk {
	d := newDisk(0)
	d.Flag = FlagImageName
	d.BootOrder = 1
	d.SizeGiB = opts.Int(FlagDiskSize)
	d.Bus = orDefault(opts.String(FlagDiskBus), defaultDiskBus)
	if image := opts.String(FlagImageName); image == "" {
		p.Addf(FlagImageName, "is required when --%s is not given: the cloud image of the root disk, as namespace/name or name", FlagDiskInfo)
	} else if ref, err := parseRef(image, namespace); err != nil {
		p.Addf(FlagImageName, "%v", err)
	} else {
		d.Image = &ref
	}
	if d.SizeGiB <= 0 {
		p.Addf(FlagDiskSize, "must be a positive whole number of GiB when --%s is not given, got %d", FlagDiskInfo, d.SizeGiB)
	} else if int64(d.SizeGiB) > MaxGiB {
		p.Addf(FlagDiskSize, "must be at most %d GiB (the most a Kubernetes quantity holds in bytes), got %d", MaxGiB, d.SizeGiB)
	}
	if !slices.Contains(diskBuses, d.Bus) {
		p.Addf(FlagDiskBus, "must be one of %s, got %q", lists.Or(diskBuses), d.Bus)
	}
	return []Disk{d}
}

// newDisk is disk number index with Harvester's volume defaults: ReadWriteMany + Block, which Longhorn serves
// and live migration needs.
func newDisk(index int) Disk {
	return Disk{
		Name:       fmt.Sprintf("disk-%d", index),
		Bus:        defaultDiskBus,
		AccessMode: corev1.ReadWriteMany,
		VolumeMode: corev1.PersistentVolumeBlock,
	}
}

// diskFromJSON validates entry index of --harvester-disk-info.
func diskFromJSON(p *Problems, index int, dj diskJSON, namespace string) Disk {
	flag, path := FlagDiskInfo, fmt.Sprintf("disks[%d]", index)
	d := newDisk(index)
	d.Flag = FlagDiskInfo
	d.StorageClass = dj.StorageClassName
	d.SizeGiB = int(dj.Size)
	d.Bus = orDefault(dj.Bus, d.Bus)
	d.HotPlug = dj.HotPlugAble
	d.KeepOnRemove = dj.AutoDelete != nil && !*dj.AutoDelete
	d.AccessMode = corev1.PersistentVolumeAccessMode(orDefault(dj.AccessMode, string(d.AccessMode)))
	d.VolumeMode = corev1.PersistentVolumeMode(orDefault(dj.VolumeMode, string(d.VolumeMode)))
	if dj.ImageName != "" {
		ref, err := parseRef(dj.ImageName, namespace)
		if err != nil {
			p.Addf(flag, "%s.imageName %v", path, err)
		} else {
			d.Image = &ref
		}
	} else if dj.StorageClassName == "" {
		p.Addf(flag, "%s needs imageName (a cloud image, as namespace/name or name) or storageClassName (for a blank disk)", path)
	}
	if dj.StorageClassName != "" {
		if msgs := validation.IsDNS1123Subdomain(dj.StorageClassName); len(msgs) > 0 {
			p.Addf(flag, "%s.storageClassName %q is not a valid storage class name", path, dj.StorageClassName)
		}
	}
	if dj.Size <= 0 {
		p.Addf(flag, "%s.size must be a positive whole number of GiB, got %d", path, dj.Size)
	} else if int64(dj.Size) > MaxGiB {
		p.Addf(flag, "%s.size must be at most %d GiB (the most a Kubernetes quantity holds in bytes), got %d", path, MaxGiB, dj.Size)
	}
	if dj.BootOrder < 0 {
		p.Addf(flag, "%s.bootOrder must be 0 (not bootable) or a positive whole number, got %d", path, dj.BootOrder)
	} else if dj.BootOrder > maxBootOrder {
		p.Addf(flag, "%s.bootOrder must be at most %d, got %d", path, maxBootOrder, dj.BootOrder)
	} else {
		d.BootOrder = uint(dj.BootOrder)
	}
	if !slices.Contains(diskBuses, d.Bus) {
		p.Addf(flag, "%s.bus must be one of %s, got %q", path, lists.Or(diskBuses), dj.Bus)
	}
	switch orDefault(dj.Type, diskTypeDisk) {
	case diskTypeDisk:
	case diskTypeCDROM:
		d.CDROM = true
		if dj.Bus == "" {
			d.Bus = defaultCDROMBus
		} else if d.Bus == "virtio" {
			// kubevirt/kubevirt pkg/storage/admitters/disks.go: "Bus type virtio is invalid for CD-ROM device".
			p.Addf(flag, "%s.bus virtio cannot carry a cd-rom (KubeVirt refuses it); use sata or scsi", path)
		}
	default:
		p.Addf(flag, "%s.type must be %q or %q, got %q", path, diskTypeDisk, diskTypeCDROM, dj.Type)
	}
	if !slices.Contains(accessModes, d.AccessMode) {
		p.Addf(flag, "%s.accessMode must be one of %s, got %q", path, lists.Or(accessModes), dj.AccessMode)
	}
	if !slices.Contains(volumeModes, d.VolumeMode) {
		p.Addf(flag, "%s.volumeMode must be one of %s, got %q", path, lists.Or(volumeModes), dj.VolumeMode)
	}
	if d.Cache = dj.Cache; d.Cache != "" && !slices.Contains(cacheModes, d.Cache) {
		p.Addf(flag, "%s.cache must be one of %s (KubeVirt's disk cache modes), or empty for KubeVirt's choice, got %q", path, lists.Or(cacheModes), dj.Cache)
	}
	diskIOFromJSON(p, path, dj, &d)
	return d
}
