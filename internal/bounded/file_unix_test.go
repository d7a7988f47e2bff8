//go:build unix

package bounded

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/internal/hostile"
)

// readWithin runs ReadRegularFile in a goroutine and fails the test if it has not returned within a few
// seconds: every refusal must come without blocking.
func readWithin(t *testing.T, path string, limit int64) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := ReadRegularFile(path, limit)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("ReadRegularFile(%s) has not returned after 5 s: it blocks", path)
		return nil, nil
	}
}

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "id_rsa")
	if err := os.WriteFile(regular, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo, sock := hostile.SpecialFiles(t)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	linkToFIFO := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, linkToFIFO); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 3*maxSize+maxSize/5), 0o600); err != nil {
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, make([]byte, 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	oneOver := filepath.Join(dir, "one-over")
	if err := os.WriteFile(oneOver, make([]byte, maxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}

	type readCase struct {
		name    string
		path    string
		limit   int64
		want    string // content, when it reads
		wantErr string // the whole error text
		notReg  bool   // a *NotRegularError
		size    bool   // a *SizeError
	}
	tests := []readCase{
		{name: "regular file", path: regular, limit: 64 << 10, want: "key"},
		{name: "symlink to a regular file", path: link, limit: 64 << 10, want: "key"},
		{name: "exactly the limit", path: exact, limit: 64 << 10, want: string(make([]byte, 64<<10))},
		{name: "FIFO", path: fifo, limit: maxSize, wantErr: "it is a FIFO (named pipe), not a regular file", notReg: true},
		{name: "symlink to a FIFO", path: linkToFIFO, limit: maxSize, wantErr: "it is a FIFO (named pipe), not a regular file", notReg: true},
		{name: "unix socket", path: sock, limit: maxSize, wantErr: "it is a socket, not a regular file", notReg: true},
		{name: "/dev/zero", path: "/dev/zero", limit: maxSize, wantErr: "it is a character device, not a regular file", notReg: true},
		{name: "/dev/null", path: os.DevNull, limit: maxSize, wantErr: "it is a character device, not a regular file", notReg: true},
		{name: "directory", path: dir, limit: maxSize, wantErr: "it is a directory, not a regular file", notReg: true},
		{name: "over the limit", path: big, limit: maxSize, wantErr: "it is 3.2 MiB, over the 1 MiB limit", size: true},
		{name: "one byte over", path: oneOver, limit: maxSize, wantErr: "it is 1048577 bytes, over the 1 MiB limit", size: true},
		{name: "over a small limit", path: exact, limit: 64<<10 - 1, wantErr: "it is 65536 bytes, over the 64 KiB limit", size: true},
		{name: "missing", path: filepath.Join(dir, "missing"), limit: maxSize, wantErr: "no such file or directory"},
	}
	if _, err := os.Stat("/dev/tty"); err == nil {
		tests = append(tests, readCase{name: "/dev/tty", path: "/dev/tty", limit: maxSize, wantErr: "it is a character device, not a regular file", notReg: true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readWithin(t, tt.path, tt.limit)
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("ReadRegularFile() = %d bytes, %v; want %d bytes", len(got), err, len(tt.want))
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("ReadRegularFile() error = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q repeats the path", err)
			}
			var nr *NotRegularError
			var se *SizeError
			if errors.As(err, &nr) != tt.notReg || errors.As(err, &se) != tt.size {
				t.Errorf("error %T: NotRegularError %v, SizeError %v; want %v, %v", err, nr != nil, se != nil, tt.notReg, tt.size)
			}
		})
	}
}

// A block device is refused by what it is, when the machine has one to try.
func TestReadRegularFileBlockDevice(t *testing.T) {
	for _, dev := range []string{"/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/disk0"} {
		if fi, err := os.Stat(dev); err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0 {
			if _, err := readWithin(t, dev, maxSize); err == nil || err.Error() != "it is a block device, not a regular file" {
				t.Fatalf("ReadRegularFile(%s) error = %v", dev, err)
			}
			return
		}
	}
	t.Skip("no block device found to try")
}

// maxSize is the limit the cases read with: 1 MiB, as the driver's largest inputs.
const maxSize = 1 << 20
