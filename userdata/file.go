package userdata

import (
	"fmt"
	"io"
	"os"
	"strings"
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
//   - anything else is a path, and a file that is missing, unreadable, not a regular file or over 1 MiB is an
//     error naming the path.
func ReadFileOrInline(value string) ([]byte, error) {
	trimmed := strings.TrimSpace(value)
	switch {
	case trimmed == "":
		return nil, nil
	case strings.HasPrefix(trimmed, "#") || strings.ContainsAny(value, "\r\n"):
		return []byte(value), nil
	}
	data, err := readRegularFile(value)
	if err != nil {
		return nil, fmt.Errorf("cannot read the file %q (rancher-machine passes a file path here; inline "+
			"cloud-config must start with \"#cloud-config\"): %w", value, err)
	}
	return data, nil
}

// readRegularFile reads path if it is a regular file of at most MaxSize bytes. Devices and FIFOs are refused,
// so a mistyped value cannot block on /dev/stdin or read /dev/zero forever.
func readRegularFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("it is a directory")
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("larger than 1 MiB, the most a cloud-init Secret holds")
	}
	return data, nil
}

// unwrapPathError drops the *os.PathError wrapper, whose message repeats the path the caller already names.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
