package objects

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// upstreamTool returns the tool of hack/tools/<name> (kubevirt, harvester), built by `hack/tools.sh <name>`
// (make admission-tools and make deps run it first; make quick does not). Without it the tests that need it fail when DMDH_REQUIRE_TOOLS=1 (make
// test, CI) and are skipped otherwise, saying the command that builds it (testenv.Tool).
func upstreamTool(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(testenv.Tool(t, name), name)
}

// admitVerdict is one line of `kubevirt admit` and `harvester admit`.
type admitVerdict struct {
	File     string            `json:"file"`
	Name     string            `json:"name"`
	Allowed  bool              `json:"allowed"`
	Message  string            `json:"message"`
	Warnings []string          `json:"warnings"`
	Mutated  bool              `json:"mutated"`
	Requests map[string]string `json:"requests"`
}

// kubevirtAdmit runs KubeVirt's VirtualMachine admitter (virt-api's, without a server) on the VirtualMachines in
// files, as a user's CREATE on Harvester, and returns its verdicts.
func kubevirtAdmit(t *testing.T, files ...string) []admitVerdict {
	t.Helper()
	return runAdmit(t, "kubevirt", files...)
}

// runAdmit runs `<tool> admit args...` and returns its verdicts.
func runAdmit(t *testing.T, tool string, args ...string) []admitVerdict {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(upstreamTool(t, tool), append([]string{"admit"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s admit: %v\n%s", tool, err, stderr.String())
	}
	var out []admitVerdict
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var v admitVerdict
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s admit printed %q: %v", tool, sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

var vmDocument = regexp.MustCompile(`(?m)^kind: VirtualMachine$`)

// goldenVMs returns the golden files under testdata that hold VirtualMachines (the builder's, and rendered
// manifests), and how many VirtualMachines they hold.
func goldenVMs(t *testing.T) (withVMs []string, vms int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(vmDocument.FindAll(data, -1)); n > 0 {
			withVMs = append(withVMs, f)
			vms += n
		}
	}
	if vms < len(vmCases) {
		t.Fatalf("found %d golden VirtualMachines, fewer than the %d builder cases", vms, len(vmCases))
	}
	return withVMs, vms
}

// Every golden VirtualMachine under testdata (the builder's, and those inside rendered manifests) passes
// KubeVirt's own VirtualMachine admission with Harvester's KubeVirt configuration, without warnings.
func TestGoldenVMsPassKubeVirtAdmission(t *testing.T) {
	withVMs, want := goldenVMs(t)
	allAllowed(t, "KubeVirt", kubevirtAdmit(t, withVMs...), want)
}

// allAllowed checks that the verdicts of who's admission are want VirtualMachines, each allowed without warnings.
func allAllowed(t *testing.T, who string, verdicts []admitVerdict, want int) {
	t.Helper()
	if len(verdicts) != want {
		t.Fatalf("%s judged %d VirtualMachines, want %d: %+v", who, len(verdicts), want, verdicts)
	}
	for _, v := range verdicts {
		if !v.Allowed {
			t.Errorf("%s: %s refuses VirtualMachine %s: %s", v.File, who, v.Name, v.Message)
		}
		if len(v.Warnings) > 0 {
			t.Errorf("%s: %s warns about VirtualMachine %s: %v", v.File, who, v.Name, v.Warnings)
		}
	}
}

// The check above can fail: the same admitter refuses a golden VM whose CPU cores are a string, one with a disk
// that names no volume, and one with a machine type KubeVirt does not emulate, each with KubeVirt's own message.
func TestKubeVirtAdmissionRefuses(t *testing.T) {
	kubevirtRefusesEdited(t, "minimal-legacy.yaml", map[string]struct{ old, new, want string }{
		"cores-string.yaml": {"cores: 2\n", "cores: \"two\"\n",
			`spec.template.spec.domain.cpu.cores in body must be of type integer: "string"`},
		// What --harvester-machine-type refuses, KubeVirt refuses too (config.parseMachineType).
		"machine-type-i440fx.yaml": {"        cpu:\n", "        machine: {type: pc-i440fx-9.0}\n        cpu:\n",
			"spec.template.spec.domain.machine.type is not supported: pc-i440fx-9.0 (allowed values: [q35* pc-q35*])"},
		"disk-without-volume.yaml": {"        devices:\n          disks:\n", "        devices:\n          disks:\n          - name: orphan\n            disk: {bus: virtio}\n",
			"spec.template.spec.domain.devices.disks[0].Name 'orphan' not found."},
	})
}

// What the disk performance options refuse before the create (config's parseDiskIO and diskIOFromJSON), KubeVirt's
// admitter refuses too: a supplemental pool without its thread count, a dedicated I/O thread off virtio, an I/O
// mode it does not know.
func TestKubeVirtAdmissionRefusesDiskIO(t *testing.T) {
	kubevirtRefusesEdited(t, "disk-io-supplemental-pool-persistent-efi.yaml", map[string]struct{ old, new, want string }{
		"pool-without-count.yaml": {"        ioThreads:\n          supplementalPoolThreadCount: 4\n", "",
			"the number of iothreads needs to be set and positive for the dedicated policy"},
		"dedicated-thread-on-scsi.yaml": {"          - cache: writeback\n", "          - cache: writeback\n            dedicatedIOThread: true\n",
			"IOThreads are not supported for disks on a scsi bus"},
		"io-uring.yaml": {"            io: threads\n", "            io: io_uring\n",
			"Disk IO mode for spec.template.spec.domain.devices.disks is not supported. Supported modes are: native, threads."},
	})
}

// kubevirtRefusesEdited has KubeVirt's admitter judge the golden VM testdata/vm/<name> with each case's edit (old
// replaced by new), and checks that it refuses each with the case's message.
func kubevirtRefusesEdited(t *testing.T, name string, cases map[string]struct{ old, new, want string }) {
	t.Helper()
	golden, err := os.ReadFile(filepath.Join("testdata", "vm", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for file, c := range cases {
		if !bytes.Contains(golden, []byte(c.old)) {
			t.Fatalf("%s: %s no longer contains %q", file, name, c.old)
		}
		f := filepath.Join(dir, file)
		if err := os.WriteFile(f, bytes.Replace(golden, []byte(c.old), []byte(c.new), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	verdicts := kubevirtAdmit(t, files...)
	if len(verdicts) != len(cases) {
		t.Fatalf("KubeVirt's admitter judged %d VirtualMachines, want %d: %+v", len(verdicts), len(cases), verdicts)
	}
	for _, v := range verdicts {
		want := cases[filepath.Base(v.File)].want
		if v.Allowed || v.Message != want {
			t.Errorf("%s: allowed %v, message %q; want refused with %q", filepath.Base(v.File), v.Allowed, v.Message, want)
		}
	}
}
