package networkconfig

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// netConvert runs cloud-init's own network-config parser and a renderer (`cloud-init devel net-convert`).
func netConvert(t *testing.T, doc []byte, outputKind, distro string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "network-config")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	return exec.Command(testenv.CloudInit(t), "devel", "net-convert", "--network-data", f, "--kind", "yaml",
		"--output-kind", outputKind, "--distro", distro, "--directory", filepath.Join(dir, "out")).CombinedOutput()
}

// netConvertRendered is netConvert that also returns every file the renderer wrote, one after the other.
func netConvertRendered(t *testing.T, doc []byte, outputKind, distro string) (out, rendered []byte, err error) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "network-config")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	out, err = exec.Command(testenv.CloudInit(t), "devel", "net-convert", "--network-data", f, "--kind", "yaml",
		"--output-kind", outputKind, "--distro", distro, "--directory", outDir).CombinedOutput()
	walkErr := filepath.WalkDir(outDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rendered = append(append(rendered, "# "+path+"\n"...), b...)
		return err
	})
	if err == nil && walkErr != nil {
		err = walkErr
	}
	return out, rendered, err
}

// renderers are the cloud-init renderers a guest may use: ENI (Debian 12), sysconfig (RHEL and SUSE families),
// netplan (Ubuntu).
var renderers = [][2]string{{"eni", "debian"}, {"sysconfig", "rhel"}, {"netplan", "ubuntu"}}

// The valid network-configs render without a warning through every renderer; the invalid ones marked
// cloudInitFails make cloud-init itself fail, so the refusal spares a guest whose network never comes up.
func TestNetworkDataAsCloudInitReadsIt(t *testing.T) {
	testenv.CloudInit(t)
	for _, f := range validNetworkData(t) {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range renderers {
			out, err := netConvert(t, doc, r[0], r[1])
			if err != nil || bytes.Contains(out, []byte("WARNING")) || bytes.Contains(out, []byte("Skipping")) {
				t.Errorf("%s: net-convert to %s: %v\n%s", f, r[0], err, out)
			}
		}
	}
	for _, tt := range invalidNetworkData {
		if !tt.cloudInitFails {
			continue
		}
		failed := false
		for _, r := range renderers[:2] { // netplan passes v2 through unread
			if out, err := netConvert(t, []byte(tt.doc), r[0], r[1]); err != nil && bytes.Contains(out, []byte("Error")) {
				failed = true
			}
		}
		if !failed {
			t.Errorf("%s: cloud-init renders it without error; the test case should not claim it fails", tt.name)
		}
	}
}
