// Package lists words lists for messages and keeps them tidy. It imports nothing of the driver's.
package lists

import (
	"sort"
	"strings"
)

// Or renders allowed values for an error message: "virtio, scsi or sata".
func Or[T ~string](allowed []T) string {
	parts := make([]string, len(allowed))
	for i, a := range allowed {
		parts[i] = string(a)
	}
	return Join(parts, "or")
}

// Join joins items as prose: "a, b and c" (conj "and") or "a, b or c".
func Join(items []string, conj string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// SortedUnique returns the distinct non-blank items, trimmed and sorted.
func SortedUnique(items []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(items))
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
