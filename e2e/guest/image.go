// Package guest boots the VirtualMachines the driver creates as real Linux guests under qemu, on this machine:
// the image hack/guest-image.sh builds (Debian with cloud-init and an unstarted qemu-guest-agent), a NoCloud seed
// made from the driver's cloud-init Secret, user-mode networking with SSH forwarded on 127.0.0.1, and the guest
// agent's virtio-serial port, read the way KubeVirt's virt-handler reads it.
package guest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// ImageEnv names a directory holding a prebuilt image (vmlinuz, initrd.img, rootfs.qcow2); when unset,
// hack/guest-image.sh builds it into the cache.
const ImageEnv = "DMDH_GUEST_IMAGE"

// Image is the guest's kernel, initramfs and read-only root file system.
type Image struct {
	Kernel, Initrd, Rootfs string
}

// FindImage returns the guest image, building it on first use (minutes, once per recipe; needs root and Debian's
// packages, which the script installs when missing).
func FindImage(ctx context.Context) (Image, error) {
	dir, err := repo.ToolDir(ctx, "guest-image", ImageEnv)
	if err != nil {
		return Image{}, err
	}
	img := Image{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img"), Rootfs: filepath.Join(dir, "rootfs.qcow2")}
	for _, f := range []string{img.Kernel, img.Initrd, img.Rootfs} {
		if _, err := os.Stat(f); err != nil {
			return Image{}, fmt.Errorf("guest image: %w", err)
		}
	}
	return img, nil
}
