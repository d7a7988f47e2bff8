package guest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Seed is what cloud-init's NoCloud datasource reads: the files of a volume labelled "cidata". KubeVirt builds
// the same volume from a cloudInitNoCloud disk whose user data and network data come from a Secret.
type Seed struct {
	UserData, NetworkData []byte
	// InstanceID and Hostname go to meta-data (the stand-in uses the VM's name for both; being stable across
	// restarts, cloud-init's per-instance modules run on the first boot only, as on Harvester).
	InstanceID, Hostname string
}

// writeISO writes the seed as an ISO 9660 image at path, with genisoimage (Debian's package, installed by
// hack/guest-image.sh).
func (s Seed) writeISO(path string) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), "seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	meta := fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", s.InstanceID, s.Hostname)
	files := map[string][]byte{"user-data": s.UserData, "meta-data": []byte(meta)}
	if len(s.NetworkData) > 0 {
		files["network-config"] = s.NetworkData
	}
	args := []string{"-quiet", "-output", path, "-volid", "cidata", "-joliet", "-rock"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
		args = append(args, filepath.Join(dir, name))
	}
	if out, err := exec.Command("genisoimage", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("genisoimage: %v: %s", err, out)
	}
	return nil
}
