package bounded

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is ReadRegularFile's refusal of something other than a regular file.
type NotRegularError struct {
	// What the path names, as the message says it: "a directory", "a FIFO (named pipe)", "a socket",
	// "a character device", "a block device" or "an irregular file".
	What string
}

// Error is "it is a FIFO (named pipe), not a regular file".
func (e *NotRegularError) Error() string { return "it is " + e.What + ", not a regular file" }

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
