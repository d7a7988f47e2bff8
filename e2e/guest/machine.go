package guest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec describes one boot of a guest.
type Spec struct {
	Image Image
	// Disk is the guest's writable disk, a qcow2 overlay on Image.Rootfs. It is created when missing and kept
	// across boots, like a VM's PVC across restarts; the caller removes it with the VM.
	Disk string
	Seed Seed
	// MACs of the guest's NICs, in order (at least one). Each NIC gets its own user-mode network; the first
	// also forwards a port on 127.0.0.1 to the guest's SSH port.
	MACs     []string
	CPUs     int // [2]
	MemoryMB int // [512]
	// Dir receives the sockets, the seed and the console log for this boot; it must exist.
	Dir string
}

// Machine is a running qemu process.
type Machine struct {
	// SSH is the 127.0.0.1:port forwarded to the guest's port 22.
	SSH string
	// Console is the file the guest's serial console is written to.
	Console string
	// Accel is "kvm" or "tcg".
	Accel string
	// Disk is the guest's writable disk (Spec.Disk), which outlives the process.
	Disk string

	cmd   *exec.Cmd
	agent agent
	qmp   string
	done  chan struct{}
	mu    sync.Mutex
	err   error // how the process ended, once done is closed
}

// Boot starts qemu for spec. The process is killed when the calling process dies (Pdeathsig), so a crashed test
// leaves no guest running; ctx bounds the start only.
func Boot(ctx context.Context, spec Spec) (*Machine, error) {
	if len(spec.MACs) == 0 {
		return nil, errors.New("guest: a guest needs at least one NIC")
	}
	if spec.CPUs == 0 {
		spec.CPUs = 2
	}
	if spec.MemoryMB == 0 {
		spec.MemoryMB = 512
	}
	if _, err := os.Stat(spec.Disk); os.IsNotExist(err) {
		out, err := exec.CommandContext(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", spec.Image.Rootfs, spec.Disk).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("guest disk: qemu-img: %v: %s", err, out)
		}
	}
	seed := filepath.Join(spec.Dir, "seed.iso")
	if err := spec.Seed.writeISO(seed); err != nil {
		return nil, fmt.Errorf("guest seed: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	m := &Machine{
		SSH:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Console: filepath.Join(spec.Dir, "console.log"),
		Accel:   Accel(),
		Disk:    spec.Disk,
		agent:   agent{socket: filepath.Join(spec.Dir, "qga.sock")},
		qmp:     filepath.Join(spec.Dir, "qmp.sock"),
		done:    make(chan struct{}),
	}
	args := []string{
		"-name", spec.Seed.Hostname, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-machine", "q35", "-accel", m.Accel, "-cpu", cpuModel(m.Accel),
		"-smp", strconv.Itoa(spec.CPUs), "-m", strconv.Itoa(spec.MemoryMB),
		"-kernel", spec.Image.Kernel, "-initrd", spec.Image.Initrd,
		// net.ifnames=0: NICs are eth0, eth1… as the stand-in's simulated guests name them.
		"-append", "root=/dev/vda rw console=ttyS0 net.ifnames=0",
		"-drive", "file=" + spec.Disk + ",if=virtio,format=qcow2,discard=unmap",
		"-drive", "file=" + seed + ",if=virtio,format=raw,readonly=on",
		"-serial", "file:" + m.Console,
		"-qmp", "unix:" + m.qmp + ",server=on,wait=off",
		"-device", "virtio-serial",
		"-chardev", "socket,id=qga,path=" + m.agent.socket + ",server=on,wait=off",
		"-device", "virtserialport,chardev=qga,name=org.qemu.guest_agent.0",
		"-device", "virtio-rng-pci",
	}
	for i, mac := range spec.MACs {
		// restrict=on: the guest reaches nothing outside; only the forwarded port reaches it.
		netdev := fmt.Sprintf("user,id=n%d,restrict=on", i)
		if i == 0 {
			netdev += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-:22", port)
		}
		args = append(args, "-netdev", netdev, "-device", fmt.Sprintf("virtio-net-pci,netdev=n%d,mac=%s", i, mac))
	}
	m.cmd = exec.Command("qemu-system-x86_64", args...)
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stderr := &tailBuffer{}
	m.cmd.Stdout, m.cmd.Stderr = stderr, stderr
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	go func() {
		err := m.cmd.Wait()
		if err != nil && stderr.String() != "" {
			err = fmt.Errorf("%w: %s", err, stderr.String())
		}
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(m.done)
	}()
	return m, nil
}

// Done is closed when the qemu process has ended (the guest powered off, or it was stopped or killed).
func (m *Machine) Done() <-chan struct{} { return m.done }

// Err is how the process ended; nil while it runs or after a clean power-off.
func (m *Machine) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Interfaces asks the guest agent for the guest's interfaces; it fails while no agent runs in the guest.
func (m *Machine) Interfaces(ctx context.Context) ([]Interface, error) {
	return m.agent.interfaces(ctx)
}

// AgentInfo asks the guest agent for its version; it fails while no agent runs in the guest.
func (m *Machine) AgentInfo(ctx context.Context) (Info, error) { return m.agent.info(ctx) }

// OSInfo asks the guest agent which operating system and kernel run in the guest.
func (m *Machine) OSInfo(ctx context.Context) (OSInfo, error) { return m.agent.osInfo(ctx) }

// Stop asks the guest to power off (ACPI, as virt-handler does for a graceful shutdown) and waits up to grace for
// it, then kills it. It returns once the process is gone.
func (m *Machine) Stop(grace time.Duration) {
	if grace > 0 {
		if err := qmp(m.qmp, "system_powerdown"); err == nil {
			select {
			case <-m.done:
				return
			case <-time.After(grace):
			}
		}
	}
	m.Kill()
}

// Kill ends the qemu process at once and waits for it.
func (m *Machine) Kill() {
	select {
	case <-m.done:
		return
	default:
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.done
}

// AccelEnv forces the accelerator ("kvm" or "tcg").
const AccelEnv = "DMDH_GUEST_ACCEL"

// Accel is the accelerator qemu gets here: $DMDH_GUEST_ACCEL when set, else "kvm" when /dev/kvm can be opened and
// the CPU has hardware virtualisation (vmx or svm), else "tcg" (software emulation). /dev/kvm alone is not enough:
// on machines that expose it without vmx/svm, a guest under KVM spins without printing a line.
func Accel() string {
	if a := os.Getenv(AccelEnv); a != "" {
		return a
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return "tcg"
	}
	f.Close()
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "tcg"
	}
	for _, line := range strings.Split(string(cpuinfo), "\n") {
		if strings.HasPrefix(line, "flags") {
			for _, flag := range strings.Fields(line) {
				if flag == "vmx" || flag == "svm" {
					return "kvm"
				}
			}
			break
		}
	}
	return "tcg"
}

func cpuModel(accel string) string {
	if accel == "kvm" {
		return "host"
	}
	return "max"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last 4 KiB written to it: qemu's complaints, if any.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if n := len(b.buf); n > 4096 {
		b.buf = b.buf[n-4096:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.buf))
}

// cloudInitFinished is the line cloud-init's final stage prints to the console (its final_message).
var cloudInitFinished = regexp.MustCompile(`Cloud-init v\. \S+ finished at`)

// WaitCloudInit waits until the guest's console shows that cloud-init has finished its last stage, or ctx ends,
// or qemu does.
func (m *Machine) WaitCloudInit(ctx context.Context) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(m.Console); err == nil && cloudInitFinished.Match(b) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cloud-init did not finish: %w", ctx.Err())
		case <-m.done:
			return fmt.Errorf("qemu ended before cloud-init finished: %v", m.Err())
		case <-tick.C:
		}
	}
}

// ConsoleTail returns the last n bytes of the guest's console, for failure messages.
func (m *Machine) ConsoleTail(n int) string { return ConsoleTail(m.Console, n) }

// ConsoleTail returns the last n bytes of the console file at path.
func ConsoleTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
