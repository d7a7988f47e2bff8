package config_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// hostileCase is one input of the worst kind for its class, and what the refusal must say.
type hostileCase struct {
	name string
	opts Options
	want string // in the error, which must name the flag
}

// hostileCases are the worst input of each class: files that block or never end, user data that inflates far
// past its size, numbers past what their objects hold, JSON nested past reason, values of megabytes.
func hostileCases(t testing.TB) []hostileCase {
	fifo, sock := hostile.SpecialFiles(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#"), 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	min := configtest.MinimalOptions
	w := configtest.With
	deep := hostile.DeepJSON(20000)
	return []hostileCase{
		{"cloud-config names a FIFO", w(min(), FlagCloudConfig, fifo), "--harvester-cloud-config: "},
		{"cloud-config names a socket", w(min(), FlagCloudConfig, sock), "--harvester-cloud-config: "},
		{"cloud-config names /dev/zero", w(min(), FlagCloudConfig, "/dev/zero"), "--harvester-cloud-config: "},
		{"cloud-config names a directory", w(min(), FlagCloudConfig, dir), "--harvester-cloud-config: "},
		{"cloud-config file of 3 MiB", w(min(), FlagCloudConfig, big), "--harvester-cloud-config: "},
		{"private key names a FIFO", w(min(), FlagSSHPrivateKeyPath, fifo), "--harvester-ssh-private-key-path: cannot read"},
		{"private key names /dev/zero", w(min(), FlagSSHPrivateKeyPath, "/dev/zero"), "--harvester-ssh-private-key-path: cannot read"},
		{"private key of 3 MiB", w(min(), FlagSSHPrivateKeyPath, big), "--harvester-ssh-private-key-path: cannot read"},
		{"user data of many gzip parts", w(min(), FlagUserData, hostile.GzipParts(250, 40<<10)), "over the 1 MiB limit"},
		{"user data of 5 MiB", w(min(), FlagUserData, "#cloud-config\n#"+strings.Repeat("x", 5<<20)), "--harvester-user-data: is 5 MiB long"},
		{"a data Secret's name of 1 MiB", w(min(), FlagUserDataSecret, strings.Repeat("a", 1<<20)), "--harvester-user-data-secret: is 1 MiB long"},
		{"user data in the data Secret flag", w(min(), FlagNetworkDataSecret, "version: 2\nethernets: {}\n"+strings.Repeat("#", 60<<10)), "--harvester-network-data-secret: must name a Secret"},
		{"a JSON flag of 1 MiB", w(min(), FlagDiskInfo, strings.Repeat(" ", 1<<20)), "--harvester-disk-info: is 1 MiB long"},
		{"cores past uint32", w(min(), FlagCPUCount, 1<<40), "--harvester-cpu-count: must be at most 4294967295"},
		{"memory past int64 bytes", w(min(), FlagMemorySize, 1<<40), "--harvester-memory-size: must be at most 8589934591"},
		{"disk past int64 bytes", w(min(), FlagDiskSize, 1<<40), "--harvester-disk-size: must be at most 8589934591 GiB"},
		{"timeout past a Duration", w(min(), FlagCreateTimeout, "1152921504606846976"), "--harvester-create-timeout: must be at most 9223372036"},
		{"reserved memory past the memory", w(min(), FlagReservedMemorySize, 1<<60), "--harvester-reserved-memory-size: "},
		{"reserved memory past int64 bytes", w(min(), FlagReservedMemorySize, MaxGiB<<10+1), "--harvester-reserved-memory-size: must be at most 8796093021184 MiB"},
		{"JSON size past 2^63", w(min(), FlagDiskInfo, `{"disks":[{"imageName":"a","size":92233720368547758070}]}`), "--harvester-disk-info: disks[0]: "},
		{"JSON size past 2^53", w(min(), FlagDiskInfo, `{"disks":[{"imageName":"a","size":9007199254740993}]}`), "disks[0].size must be at most 8589934591 GiB (the most a Kubernetes quantity holds in bytes), got 9007199254740993"},
		{"JSON boot order past int32", w(min(), FlagDiskInfo, `{"disks":[{"imageName":"a","size":1,"bootOrder":"4294967297"}]}`), "disks[0].bootOrder must be at most 2147483647"},
		{"deep JSON in disk-info", w(min(), FlagDiskInfo, deep), "--harvester-disk-info: "},
		{"deep JSON in network-info", w(min(), FlagNetworkInfo, deep), "--harvester-network-info: "},
		{"deep JSON in vm-affinity", w(min(), FlagVMAffinity, deep), "--harvester-vm-affinity: "},
		{"deep JSON in host-device-info", w(min(), FlagHostDeviceInfo, deep), "--harvester-host-device-info: "},
		{"deep JSON in vm-patch", w(min(), FlagVMPatch, deep), "--harvester-vm-patch: "},
		{"vm-patch names a FIFO", w(min(), FlagVMPatch, fifo), "--harvester-vm-patch: is neither JSON nor base64 of JSON, and cannot be read as a file path: it is a FIFO"},
		{"vm-patch names /dev/zero", w(min(), FlagVMPatch, "/dev/zero"), "--harvester-vm-patch: is neither JSON nor base64 of JSON, and cannot be read as a file path: it is a character device"},
		{"vm-patch file of 3 MiB", w(min(), FlagVMPatch, big), "--harvester-vm-patch: is neither JSON nor base64 of JSON, and cannot be read as a file path: it is 3 MiB"},
		{"vm-patch of 1 MiB", w(min(), FlagVMPatch, "["+strings.Repeat(" ", 1<<20)+"]"), "--harvester-vm-patch: is 1 MiB long"},
		{"deep YAML in user data", w(min(), FlagUserData, "#cloud-config\na: "+strings.Repeat("[", 20000)), "--harvester-user-data: "},
		{"all-zero MAC", w(min(), FlagNetworkInfo, `{"interfaces":[{"networkName":"n","macAddress":"00:00:00:00:00:00"}]}`), "is the all-zero address"},
		{"newline in the CPU model", w(min(), FlagCPUModel, "host-passthrough\nevil: 1"), `--harvester-cpu-model: must be a CPU model name`},
		{"newline in a vGPU device", w(min(), FlagVGPUInfo, `{"vGPURequests":[{"name":"g","deviceName":"nvidia.com/A2\nx"}]}`), "deviceName must be a resource name"},
	}
}

// No input can hang the parser or make it allocate more than 100 MB: each worst case is refused, naming its
// flag, in bounded time and memory.
func TestHostileInputIsRefusedPromptlyAndCheaply(t *testing.T) {
	const maxAlloc = 100 << 20
	for _, tc := range hostileCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			done := make(chan error, 1)
			go func() {
				_, err := ParseConfig("m1", tc.opts)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("ParseConfig still runs after 20 s: the input makes it hang")
			}
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc {
				t.Errorf("parsing allocated %d MB, more than %d MB", alloc>>20, maxAlloc>>20)
			}
		})
	}
}

// BenchmarkHostileInput reports the time and memory the parser spends refusing each worst case.
func BenchmarkHostileInput(b *testing.B) {
	for _, tc := range hostileCases(b) {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := ParseConfig("m1", tc.opts); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
