package cloudinit

import "errors"

// Part names one input of UserData, so a caller can tell the user which of its own inputs is at fault.
type Part int

const (
	partDriver      Part = iota // the driver's own cloud-config, built here: its problems are bugs
	PartUser                    // Input.User
	PartRancher                 // Input.Rancher
	PartSSHPassword             // Input.SSHPassword
	PartWriteFiles              // Input.WriteFiles
)

func (p Part) String() string {
	switch p {
	case PartUser:
		return "user data"
	case PartRancher:
		return "Rancher's cloud-config"
	case PartSSHPassword:
		return "SSH password"
	case PartWriteFiles:
		return "driver files"
	}
	return "the driver's cloud-config"
}

// Error is a problem UserData (or Check) found in one part of its input: which part, where inside it (a
// cloud-config key path such as runcmd or hostname, or a MIME part; "" for the part as a whole) and what.
type Error struct {
	Part Part
	Path string
	Err  error
}

// Error is the part, the path and what is wrong: "user data: runcmd: must be a list, not a string".
func (e *Error) Error() string { return e.Part.String() + ": " + e.Message() }

// Message is the path and what is wrong, without the part: the text to file under the caller's name for it.
func (e *Error) Message() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// inPart attributes err to part, unless it is an *Error already (which knows its part and path better).
func inPart(part Part, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Part: part, Err: err}
}

// at is an error at path inside part.
func at(part Part, path string, err error) error { return &Error{Part: part, Path: path, Err: err} }
