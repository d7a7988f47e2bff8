package networkconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidate: never panics, and an error is always an *Error with its problems.
func FuzzValidate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "network", "*"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	for _, tt := range invalidNetworkData {
		f.Add([]byte(tt.doc))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var verr *Error
		if err := Validate(b); err != nil && (!errors.As(err, &verr) || len(verr.Problems) == 0 || err.Error() == "") {
			t.Fatalf("error %q is not an *Error with problems", err)
		}
	})
}
