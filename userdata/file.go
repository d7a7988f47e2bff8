package userdata

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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
//   - anything else is a path, read with ReadRegularFile and a limit of MaxSize.
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
	data, err := ReadRegularFile(value, MaxSize)
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

// NotRegularError is ReadRegularFile's refusal of something other than a regular file.
type NotRegularError struct {
	// What the path names, as the message says it: "a directory", "a FIFO (named pipe)", "a socket",
	// "a character device", "a block device" or "an irregular file".
	What string
}

// Error is "it is a FIFO (named pipe), not a regular file".
func (e *NotRegularError) Error() string { return "it is " + e.What + ", not a regular file" }

// SizeError is a refusal for size: a file, or what an input inflates to, is over Limit bytes.
type SizeError struct {
	Verb    string // how the message says it: "it is", "inflates to"
	Size    int64  // the size found
	AtLeast bool   // reading stopped past the limit: the size is only known to be more than Limit-Before
	Before  int64  // bytes counted before this one in the same Budget, which share the limit with it
	Limit   int64  // the limit
	Why     string // what the limit is, if the message says it: "the most a cloud-init Secret holds"
}

// Error names the size found and the limit: "it is 3.2 MiB, over the 1 MiB limit"; "inflates to more than
// 1 MiB, over the 1 MiB limit (the most a cloud-init Secret holds)"; "inflates to more than 904 KiB, which with
// the 120 KiB before it is over the 1 MiB limit (…)".
func (e *SizeError) Error() string {
	var found string
	switch {
	case e.AtLeast:
		found = "more than " + FormatSize(e.Limit-e.Before)
	case FormatSize(e.Size) == FormatSize(e.Limit): // "1 MiB, over the 1 MiB limit" would say nothing
		found = fmt.Sprintf("%d bytes", e.Size)
	default:
		found = FormatSize(e.Size)
	}
	msg := e.Verb + " " + found + ", over the " + FormatSize(e.Limit) + " limit"
	if e.Before > 0 {
		msg = e.Verb + " " + found + ", which with the " + FormatSize(e.Before) + " before it is over the " +
			FormatSize(e.Limit) + " limit"
	}
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// FormatSize writes a byte count for a message: "812 bytes", "64 KiB", "3.2 MiB".
func FormatSize(n int64) string {
	const kib, mib = 1 << 10, 1 << 20
	unit := func(v float64, name string) string {
		s := fmt.Sprintf("%.1f", v)
		return strings.TrimSuffix(s, ".0") + " " + name
	}
	switch {
	case n >= mib:
		return unit(float64(n)/mib, "MiB")
	case n >= kib:
		return unit(float64(n)/kib, "KiB")
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadRegularFile reads path (through symbolic links) if it names a regular file of at most limit bytes.
//
// Nothing can make it block or read forever: the path is checked with stat before it is opened, so a FIFO (whose
// open waits for a writer), a socket, a device (/dev/zero, /dev/stdin, a terminal) or a directory is refused by
// what it is, a *NotRegularError; the open is non-blocking and does not take a terminal; the opened file is
// checked again (still regular, and the same file the stat saw, so a path swapped in between is refused); and at
// most limit+1 bytes are read. A file over limit is a *SizeError naming its size. Other errors are the operating
// system's reason ("no such file or directory", "permission denied").
//
// Errors do not repeat the path: the caller names the input it came from.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if err := checkRegular(before, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if err := checkRegular(opened, limit); err != nil {
		return nil, err
	}
	if !os.SameFile(before, opened) {
		return nil, errors.New("the file changed while it was being opened")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit { // it grew after the stat
		return nil, &SizeError{Verb: "it is", Size: int64(len(data)), AtLeast: true, Limit: limit}
	}
	return data, nil
}

// checkRegular refuses what is not a regular file, by what it is, and a regular file over limit bytes.
func checkRegular(fi fs.FileInfo, limit int64) error {
	switch m := fi.Mode(); {
	case m.IsRegular():
		if fi.Size() > limit {
			return &SizeError{Verb: "it is", Size: fi.Size(), Limit: limit}
		}
		return nil
	case m.IsDir():
		return &NotRegularError{What: "a directory"}
	case m&fs.ModeNamedPipe != 0:
		return &NotRegularError{What: "a FIFO (named pipe)"}
	case m&fs.ModeSocket != 0:
		return &NotRegularError{What: "a socket"}
	case m&fs.ModeCharDevice != 0:
		return &NotRegularError{What: "a character device"}
	case m&fs.ModeDevice != 0:
		return &NotRegularError{What: "a block device"}
	}
	return &NotRegularError{What: "an irregular file"}
}

// unwrapPathError drops the *os.PathError wrapper, whose message repeats the path the caller already names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
