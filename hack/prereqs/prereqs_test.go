// Package prereqs tests hack/prereqs.sh, the check `make quick`, `make demo` and `make test` run first: on a
// machine made of stand-ins (a PATH of fake commands, an os-release and a meminfo of the test's), it names each
// missing prerequisite with the command that installs it, and installs with apt-get what Debian can as root.
package prereqs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// machine is a stand-in system for the script: a bin folder for PATH, an os-release, a meminfo, a home.
type machine struct {
	t                             *testing.T
	bin, osRelease, meminfo, home string
}

// debian12 is /etc/os-release of Debian 12, as its base-files package writes it (the fields the script reads).
const debian12 = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n"

// fedora40 is /etc/os-release of Fedora 40 (fedora-release), a system of another family.
const fedora40 = "NAME=\"Fedora Linux\"\nVERSION=\"40 (Workstation Edition)\"\nID=fedora\nPRETTY_NAME=\"Fedora Linux 40 (Workstation Edition)\"\n"

// newMachine is a Debian 12 machine with 24 GiB, a root user, Go 1.26.8, gcc, Node.js 20 with npm and
// util-linux: everything there. Tests take things away or change them.
func newMachine(t *testing.T) *machine {
	t.Helper()
	// Read here so that go test's cache knows them: the script runs in a process of its own, whose reads it does
	// not see.
	for _, input := range []string{"../prereqs.sh", "../../go.mod"} {
		if _, err := os.ReadFile(input); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	m := &machine{t: t, bin: filepath.Join(dir, "bin"), osRelease: filepath.Join(dir, "os-release"),
		meminfo: filepath.Join(dir, "meminfo"), home: filepath.Join(dir, "home")}
	for _, d := range []string{m.bin, m.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The real commands the script runs to read what it is given.
	for _, name := range []string{"bash", "sed", "sort", "head", "awk", "dirname", "uname", "cat", "chmod"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s is not on this machine's PATH: %v", name, err)
		}
		if err := os.Symlink(path, filepath.Join(m.bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	m.file(m.osRelease, debian12)
	m.file(m.meminfo, "MemTotal:       24578412 kB\nMemFree:        20000000 kB\n")
	m.command("id", `echo 0`)
	m.command("go", `echo "go version go1.26.8 linux/amd64"`)
	m.command("gcc", `:`)
	m.command("node", `echo v20.20.2`)
	m.command("npm", `echo 10.8.2`)
	m.command("flock", `:`)
	m.command("sha256sum", `:`)
	m.command("apt-get", `echo "apt-get $*" >>"$(dirname "$0")/../apt.log"`)
	m.command("apt-cache", `printf 'nodejs:\n  Installed: (none)\n  Candidate: 18.19.0+dfsg-6~deb12u2\n'`)
	m.command("df", `printf 'Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 264000000 15000000 80000000 16%% /\n'`)
	return m
}

func (m *machine) file(path, content string) {
	m.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		m.t.Fatal(err)
	}
}

// command puts a fake command on the machine's PATH, a shell script of body.
func (m *machine) command(name, body string) {
	m.t.Helper()
	m.file(filepath.Join(m.bin, name), "#!/bin/sh\n"+body+"\n")
}

func (m *machine) remove(name string) {
	m.t.Helper()
	if err := os.Remove(filepath.Join(m.bin, name)); err != nil {
		m.t.Fatal(err)
	}
}

// run runs hack/prereqs.sh for target on the machine and returns its stderr and exit code.
func (m *machine) run(target string) (string, int) {
	m.t.Helper()
	cmd := exec.Command(filepath.Join(m.bin, "bash"), "../prereqs.sh", target)
	cmd.Env = []string{"PATH=" + m.bin, "HOME=" + m.home, "DMDH_OS_RELEASE=" + m.osRelease, "DMDH_MEMINFO=" + m.meminfo}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatal(err)
	}
	return stderr.String(), code
}

func (m *machine) aptLog() string {
	b, _ := os.ReadFile(filepath.Join(m.bin, "..", "apt.log"))
	return string(b)
}

func wantLines(t *testing.T, out string, code, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, wantCode, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("stderr lacks %q:\n%s", w, out)
		}
	}
}

// A machine with everything passes every target, silently.
func TestEverythingThere(t *testing.T) {
	m := newMachine(t)
	for _, target := range []string{"quick", "demo", "test"} {
		out, code := m.run(target)
		wantLines(t, out, code, 0)
		if out != "" {
			t.Errorf("%s: printed %q with nothing missing", target, out)
		}
	}
	if log := m.aptLog(); log != "" {
		t.Errorf("apt-get ran with nothing missing: %s", log)
	}
}

// make test without node, on a Debian whose nodejs is 18: named with where to get it, nothing installed.
func TestNoNode(t *testing.T) {
	m := newMachine(t)
	m.remove("node")
	m.remove("npm")
	out, code := m.run("test")
	wantLines(t, out, code, 1, "make test needs what this machine lacks:",
		"  - Node.js 20 or later with npm (no node on PATH), for the UI extension's build and tests: install Node.js 20 or later from https://nodejs.org/en/download (Debian 12's nodejs is 18")
	if log := m.aptLog(); log != "" {
		t.Errorf("apt-get installed Debian's Node.js 18: %s", log)
	}
	// make quick and make demo do not need it.
	for _, target := range []string{"quick", "demo"} {
		out, code := m.run(target)
		wantLines(t, out, code, 0)
	}
}

// As root on a Debian whose candidate is Node.js 20 or later, the check installs it with apt-get.
func TestNodeInstalledFromDebian(t *testing.T) {
	m := newMachine(t)
	m.remove("node")
	m.remove("npm")
	m.command("apt-cache", `printf 'nodejs:\n  Installed: (none)\n  Candidate: 20.19.2+dfsg-1\n'`)
	m.command("apt-get", `echo "apt-get $*" >>"$(dirname "$0")/../apt.log"
bin=$(dirname "$0")
case "$*" in *nodejs*) printf '#!/bin/sh\necho v20.19.2\n' >"$bin/node"; chmod +x "$bin/node" ;; esac
case "$*" in *npm*) printf '#!/bin/sh\necho 9.2.0\n' >"$bin/npm"; chmod +x "$bin/npm" ;; esac`)
	out, code := m.run("test")
	wantLines(t, out, code, 0, "prereqs: installing Node.js 20 from Debian")
	if log := m.aptLog(); !strings.Contains(log, "install -y -qq --no-install-recommends nodejs\n") ||
		!strings.Contains(log, "--no-install-recommends npm\n") {
		t.Errorf("apt-get calls:\n%s\nwant nodejs, then npm", log)
	}
}

// Node.js 18 is named as too old.
func TestOldNode(t *testing.T) {
	m := newMachine(t)
	m.command("node", `echo v18.19.0`)
	out, code := m.run("test")
	wantLines(t, out, code, 1, "  - Node.js 20 or later with npm (this is Node.js v18.19.0)")
}

// On a system of another family make test stops, naming the system and what to use instead; make quick and make
// demo run.
func TestNotDebian(t *testing.T) {
	m := newMachine(t)
	m.file(m.osRelease, fedora40)
	m.remove("apt-get")
	m.remove("apt-cache")
	out, code := m.run("test")
	wantLines(t, out, code, 1, `  - a Debian-family system: this is Fedora Linux 40 (Workstation Edition), and make test installs cloud-init, qemu, debootstrap and Chromium with apt-get: use Debian 12 (what CI runs) or a container of it`)
	for _, target := range []string{"quick", "demo"} {
		out, code := m.run(target)
		wantLines(t, out, code, 0)
	}
}

// Without root, make test names root; every problem is named at once, counted.
func TestEveryProblemAtOnce(t *testing.T) {
	m := newMachine(t)
	m.command("id", `echo 1000`)
	m.command("go", `echo "go version go1.19.8 linux/amd64"`)
	m.remove("gcc")
	m.file(m.meminfo, "MemTotal:        2000000 kB\n")
	out, code := m.run("test")
	wantLines(t, out, code, 1, "make test needs 4 things this machine lacks:",
		"  - root: make test installs Debian packages",
		"  - Go 1.26.0 or later (this is Go 1.19.8): install Go 1.26.0 from https://go.dev/dl/",
		"  - a C compiler (go vet and the tests build with cgo, CGO_ENABLED=1): as root: apt-get install -y gcc libc6-dev",
		"  - memory: make test needs about 8 GiB, this machine has 1953 MiB")
	if log := m.aptLog(); log != "" {
		t.Errorf("apt-get ran without root: %s", log)
	}
}

// As root on Debian a missing C compiler is installed.
func TestCompilerInstalled(t *testing.T) {
	m := newMachine(t)
	m.remove("gcc")
	m.command("apt-get", `echo "apt-get $*" >>"$(dirname "$0")/../apt.log"; printf '#!/bin/sh\n' >"$(dirname "$0")/gcc"; chmod +x "$(dirname "$0")/gcc"`)
	out, code := m.run("quick")
	wantLines(t, out, code, 0, "prereqs: installing a C compiler for cgo")
	if log := m.aptLog(); !strings.Contains(log, "--no-install-recommends gcc libc6-dev") {
		t.Errorf("apt-get calls: %q", log)
	}
}

// Go installed in /usr/local/go but not on PATH, or none at all.
func TestNoGo(t *testing.T) {
	m := newMachine(t)
	m.remove("go")
	out, code := m.run("quick")
	if _, err := os.Stat("/usr/local/go/bin/go"); err == nil {
		wantLines(t, out, code, 1, `  - Go on PATH: it is in /usr/local/go/bin, which is not on PATH: export PATH="$PATH:/usr/local/go/bin"`)
	} else {
		wantLines(t, out, code, 1, "  - Go 1.26.0 or later (no go on PATH): install Go 1.26.0 from https://go.dev/dl/")
	}
}

// A first run needs disk space; little left is named with where.
func TestDiskSpace(t *testing.T) {
	m := newMachine(t)
	m.command("df", `printf 'Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 264000000 260000000 3000000 99%% /\n'`)
	out, code := m.run("demo")
	wantLines(t, out, code, 1, "  - disk space: a first make demo fills about 10 GiB", "has 2 GiB free")
}

func TestUsage(t *testing.T) {
	m := newMachine(t)
	out, code := m.run("everything")
	wantLines(t, out, code, 2, "usage: ")
}
