package userdata

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// MaxSize bounds every document this package reads or inflates: the Secret that carries user data and network
// data to the guest holds at most 1 MiB in all.
const MaxSize = 1 << 20

// IsGzip reports whether b starts with the gzip magic number. cloud-init inflates such user data before looking
// at it (util.decomp_gzip in user_data.convert_string).
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Gunzip inflates gzip data (several members are read as one stream, as Python's gzip module does), refusing
// output over MaxSize.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if len(out) > MaxSize {
		return nil, errors.New("gzip: inflates to more than 1 MiB, the most a cloud-init Secret holds")
	}
	return out, nil
}
