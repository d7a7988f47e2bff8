// Package release checks the release archives the way Rancher consumes a node driver: rancher/machine's
// package/download_driver.sh in the provisioning job and rancher/rancher's base_driver.go on the server.
package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/release"

	// These tests build the plugin with `go build`, which go test's result cache cannot see; importing the
	// driver makes this test binary, and so the cache key, change whenever the driver does.
	_ "github.com/harvester/docker-machine-driver-harvester/harvester"
)

// TestReleaseArchivesAsRancherReadsThem runs goreleaser (snapshot) with the project's .goreleaser.yaml into a
// temporary dist directory and checks every Linux archive, of the driver's own name and of its second name
// (identity.Release), and the Helm chart of the second name with the UI extension's archive (chart_test.go).
func TestReleaseArchivesAsRancherReadsThem(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	version, err := release.Version(root)
	if err != nil {
		t.Fatal(err)
	}
	dist := buildSnapshot(t, root, version)

	sums := readChecksums(t, filepath.Join(dist, "sha256sums.txt"))
	for _, driver := range []string{identity.Canonical, identity.Release} {
		checkArchives(t, dist, sums, driver, version)
	}
	checkChart(t, root, dist, sums)
}

// checkArchives checks the archives of driver name driver as Rancher reads them, and that the driver says it is
// the release's version (a snapshot's: <version>-snapshot).
func checkArchives(t *testing.T, dist string, sums map[string]string, driver, version string) {
	binaryName := identity.BinaryPrefix + driver
	for _, arch := range []struct {
		goarch  string
		machine elf.Machine
	}{{"amd64", elf.EM_X86_64}, {"arm64", elf.EM_AARCH64}} {
		name := binaryName + "-" + arch.goarch + ".tar.gz"
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dist, name))
			if err != nil {
				t.Fatalf("Rancher downloads %s for its GOARCH: %v", name, err)
			}
			// download_driver.sh: the archive's sha256 must equal --driver-hash (the published checksum).
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); sums[name] != got {
				t.Errorf("checksum file says %q, the archive's sha256 is %s", sums[name], got)
			}
			// download_driver.sh types the file with `file`: gzip.
			if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
				t.Fatalf("not gzip data")
			}
			// The driver name is the file name minus docker-machine-driver-, cut at the first '-', '_' or '.'.
			if got := regexp.MustCompile(`[-_.].*$`).ReplaceAllString(strings.TrimPrefix(name, "docker-machine-driver-"), ""); got != driver {
				t.Errorf("Rancher would name the driver %q", got)
			}
			entries := tarEntries(t, data)
			if len(entries) != 1 {
				names := []string{}
				for _, e := range entries {
					names = append(names, e.hdr.Name)
				}
				t.Fatalf("the archive holds %v; it must hold exactly one file, %s (rancher/rancher takes the last entry named docker-machine-driver-*)", names, binaryName)
			}
			e := entries[0]
			if e.hdr.Name != binaryName || e.hdr.Typeflag != tar.TypeReg || e.hdr.Mode&0o111 == 0 {
				t.Fatalf("entry %q (type %c, mode %o): want a top-level executable file %s", e.hdr.Name, e.hdr.Typeflag, e.hdr.Mode, binaryName)
			}
			bin, err := elf.NewFile(bytes.NewReader(e.body))
			if err != nil {
				t.Fatalf("%s is not an ELF binary: %v", binaryName, err)
			}
			if bin.Machine != arch.machine {
				t.Errorf("binary for %v in the %s archive", bin.Machine, arch.goarch)
			}
			for _, p := range bin.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("the binary is dynamically linked; it must be static (CGO_ENABLED=0) to run in Rancher's jail")
				}
			}
			if arch.goarch == runtime.GOARCH && runtime.GOOS == "linux" {
				checkVersion(t, e.body, binaryName, version)
			}
		})
	}
}

// checkVersion runs the archive's binary: its version is the release's, as a snapshot names it.
func checkVersion(t *testing.T, body []byte, name, version string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, body, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", name, err)
	}
	if want := name + " " + release.Tag(version) + "-snapshot (commit "; !strings.HasPrefix(string(out), want) {
		t.Errorf("%s version says %q, want it to start %q", name, out, want)
	}
}

// buildSnapshot runs `goreleaser release --snapshot` (as `make release-snapshot` does, with the release's
// version) into a temporary dist directory and returns it.
func buildSnapshot(t *testing.T, root, version string) string {
	t.Helper()
	tools, err := repo.ToolDir(context.Background(), "goreleaser", "DMDH_GORELEASER_BIN")
	if err != nil {
		t.Fatalf("building goreleaser with hack/tools.sh: %v", err)
	}
	goreleaser := filepath.Join(tools, "goreleaser")
	config, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	cfgPath := filepath.Join(tmp, "goreleaser.yaml")
	// Rancher consumes the Linux archives; the darwin builds (for CLI users) would double the test's time
	// without telling anything about them.
	const goos = "goos: [linux, darwin]"
	if !bytes.Contains(config, []byte(goos)) {
		t.Fatalf(".goreleaser.yaml no longer says %q; update this test", goos)
	}
	config = bytes.Replace(config, []byte(goos), []byte("goos: [linux]"), 1)
	if err := os.WriteFile(cfgPath, append(config, []byte("\ndist: "+dist+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goreleaser, "release", "--snapshot", "--clean", "--skip=publish", "--config", cfgPath)
	cmd.Dir = root
	// The release's hooks run make (make ui-extension, make helm-chart); a make above this test (make test) must
	// not hand them its jobserver, whose descriptors go test does not pass on.
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GOFLAGS=-buildvcs=false", "DMDH_RELEASE_VERSION="+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser: %v\n%s", err, out)
	}
	return dist
}

func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no checksums file to publish: %v", err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 {
			sums[fields[1]] = fields[0]
		}
	}
	return sums
}

type tarEntry struct {
	hdr  *tar.Header
	body []byte
}

func tarEntries(t *testing.T, gz []byte) []tarEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{hdr, body})
	}
}
