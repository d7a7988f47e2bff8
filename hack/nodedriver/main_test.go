package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without the checksum file, the message says where the published one is, and not to build a release here, whose
// archives' sums cannot match the published ones.
func TestMissingChecksums(t *testing.T) {
	dir := t.TempDir()
	err := run("hcivm", "v1.1.0", filepath.Join(dir, "sha256sums.txt"), "https://github.com/harvester/docker-machine-driver-harvester/releases/download", dir)
	if err == nil {
		t.Fatal("no error without a checksum file")
	}
	if msg := err.Error(); !strings.Contains(msg, "download the release's checksum file, https://github.com/harvester/docker-machine-driver-harvester/releases/download/v1.1.0/sha256sums.txt, to "+filepath.Join(dir, "sha256sums.txt")) ||
		!strings.Contains(msg, "cannot match the published ones") {
		t.Errorf("message %q", msg)
	}
}

// With the published checksum file, one manifest per architecture, each with its archive's sum and URL.
func TestManifestsFromChecksums(t *testing.T) {
	dir := t.TempDir()
	sums := filepath.Join(dir, "sha256sums.txt")
	amd, arm := strings.Repeat("a", 64), strings.Repeat("b", 64)
	if err := os.WriteFile(sums, []byte(amd+"  docker-machine-driver-hcivm-amd64.tar.gz\n"+arm+"  docker-machine-driver-hcivm-arm64.tar.gz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run("hcivm", "v1.1.0", sums, "https://example.com/dl", dir); err != nil {
		t.Fatal(err)
	}
	for arch, sum := range map[string]string{"amd64": amd, "arm64": arm} {
		b, err := os.ReadFile(filepath.Join(dir, "nodedriver-hcivm-"+arch+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), sum) || !strings.Contains(string(b), "https://example.com/dl/v1.1.0/docker-machine-driver-hcivm-"+arch+".tar.gz") {
			t.Errorf("%s manifest:\n%s", arch, b)
		}
	}
}
