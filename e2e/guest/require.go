package guest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// Require returns the guest image for a test that boots real guests, building it on first use. It skips the test
// under -short, and on machines without the guest tooling (`hack/guest-image.sh --check` fails: not root, not
// Debian, not x86_64). Where the tooling is available an image that cannot be built fails the test under
// `make test` and skips it otherwise (testenv.Unavailable).
func Require(t testing.TB) Image {
	t.Helper()
	if testing.Short() {
		t.Skip("boots real guests (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	img, err := FindImage(ctx)
	if err == nil {
		return img
	}
	if check := toolingCheck(ctx); check != nil {
		t.Skipf("no guest tooling on this machine: %v", check)
	}
	testenv.Unavailable(t, "guest image", err)
	return Image{}
}

// toolingCheck runs `hack/guest-image.sh --check`: nil when guests can be built and booted here.
func toolingCheck(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, filepath.Join(root, "hack", "guest-image.sh"), "--check").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// BootBudget is how long a first boot may take here, to cloud-init's end: TCG (software emulation, with other
// tests running beside it) is several times slower than KVM.
func BootBudget() time.Duration {
	if Accel() == "kvm" {
		return 3 * time.Minute
	}
	return 10 * time.Minute
}
