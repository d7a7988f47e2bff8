package ownedtemp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestSweepRemovesOnlyDirsOfDeadOwners(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "ownedtemp-test-"
	// A process that has ended: its pid is stale once it has been waited for.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := mkdir(t, prefix+"stale", strconv.Itoa(dead.Process.Pid))
	live := mkdir(t, prefix+"live", strconv.Itoa(os.Getpid()))
	unowned := mkdir(t, prefix+"unowned", "")
	other := mkdir(t, "other-stale", strconv.Itoa(dead.Process.Pid))

	mine, err := Dir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{stale: false, live: true, unowned: true, other: true, mine: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(mine, ownerFile)); err != nil || string(data) != strconv.Itoa(os.Getpid()) {
		t.Errorf("owner file of a new dir: %q %v", data, err)
	}
}

// mkdir makes a directory in $TMPDIR with an owner file holding owner (none when empty).
func mkdir(t *testing.T, name, owner string) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if owner != "" {
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
