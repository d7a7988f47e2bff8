package userdata

import (
	"fmt"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
)

// ReadFileOrInline returns the document a value stands for: the content of the file it names, or the value
// itself when it is inline content.
//
// rancher-machine passes a file path in the driver's userdata flag (the one libmachine/drivers
// DriverUserdataFlag picks): with --custom-install-script it rewrites the flag's file into one holding Rancher's
// install script (commands/create.go updateUserdataFile) and replaces the value with the new file's path. Users
// sometimes paste inline cloud-config instead (rancher/rancher#47979). The rule:
//
//   - an empty (or blank) value is an empty document;
//   - a value that starts with '#' (after leading blanks) or contains a line break is inline content;
//   - anything else is a path, read with bounded.ReadRegularFile and a limit of MaxSize.
//
// An error never quotes the value: a one-line value taken for a path may be inline content holding a credential
// (a token pasted without a #cloud-config line), and the error reaches Rancher's UI and logs. It says why the
// file could not be read and which forms the value may take.
func ReadFileOrInline(value string) ([]byte, error) {
	trimmed := strings.TrimSpace(value)
	switch {
	case trimmed == "":
		return nil, nil
	case strings.HasPrefix(trimmed, "#") || strings.ContainsAny(value, "\r\n"):
		return []byte(value), nil
	}
	data, err := bounded.ReadRegularFile(value, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("cannot read it as a file path: %w (%s). %s", err, notShown, acceptedForms)
	}
	return data, nil
}

// Parts of ReadFileOrInline's error.
const (
	notShown      = "the value is not shown: it may hold a secret"
	acceptedForms = "rancher-machine passes the path of a regular file of at most 1 MiB (what a cloud-init " +
		"Secret holds) here; inline cloud-config must start with \"#cloud-config\" (or another line starting " +
		"with #) or span several lines"
)
