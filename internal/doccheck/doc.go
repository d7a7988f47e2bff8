// Package doccheck keeps the guides true: the links between the repository's Markdown files resolve, and every
// message the driver can print is quoted in docs/troubleshooting.md (or listed in docs/flag-problems.md).
package doccheck

import (
	"os"
	"path/filepath"
)

// ReadFile reads a file below root.
func ReadFile(root, path string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, path))
	return string(b), err
}
