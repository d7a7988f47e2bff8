package bounded

import (
	"fmt"
	"strings"
)

// SizeError is a refusal for size: a file, or what an input inflates to, is over Limit bytes.
type SizeError struct {
	Verb    string // how the message says it: "it is", "inflates to"
	Size    int64  // the size found
	AtLeast bool   // reading stopped past the limit: the size is only known to be more than Limit-Before
	Before  int64  // bytes counted before this one against the same limit (userdata.Budget), which share it
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
