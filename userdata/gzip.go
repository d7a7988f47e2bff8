package userdata

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
)

// MaxSize bounds every document this package reads or inflates: the Secret that carries user data and network
// data to the guest holds at most 1 MiB in all.
const MaxSize = 1 << 20

// IsGzip reports whether b starts with the gzip magic number. cloud-init inflates such user data before looking
// at it (util.decomp_gzip in user_data.convert_string).
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Gunzip inflates gzip data (several members are read as one stream, as Python's gzip module does), refusing
// output over MaxSize. It is NewBudget(MaxSize).Gunzip(b).
func Gunzip(b []byte) ([]byte, error) { return NewBudget(MaxSize).Gunzip(b) }

// Budget bounds what one input stands for in all: user data whose MIME parts are each gzip-compressed (or gzip
// inside gzip) is inflated part by part, and a limit per part would let a small input stand for any number of
// times the limit. Every inflation (and any other byte the caller counts with Spend) draws on one Budget, and
// inflating stops as soon as the total passes the limit, so memory stays bounded by it while refusing.
//
// A Budget is not safe for concurrent use.
type Budget struct {
	limit, used int64
	zr          *gzip.Reader // reused across inflations: its window and tables are allocated once
}

// NewBudget returns a Budget of limit bytes, none spent.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Used is how many bytes were counted so far.
func (b *Budget) Used() int64 { return b.used }

// Left is how many bytes may still be counted.
func (b *Budget) Left() int64 { return max(b.limit-b.used, 0) }

// why is what a Budget's limit is, as a refusal says it: for MaxSize, the most a cloud-init Secret holds.
func (b *Budget) why() string {
	if b.limit == MaxSize {
		return "the most a cloud-init Secret holds"
	}
	return ""
}

// Spend counts n bytes of input (verb is how a refusal says what they do, e.g. "it is"). Over the limit it is
// a *bounded.SizeError naming the size and the limit, and the budget is spent.
func (b *Budget) Spend(n int64, verb string) error {
	before := b.used
	b.used += n
	if b.used > b.limit {
		return &bounded.SizeError{Verb: verb, Size: n, Before: before, Limit: b.limit, Why: b.why()}
	}
	return nil
}

// Gunzip inflates gzip data (several members are read as one stream, as Python's gzip module does), counting
// what it inflates. It stops inflating as soon as the total passes the limit and returns a *bounded.SizeError that says
// the data inflates to more than the limit (together with what was counted before it, if anything).
func (b *Budget) Gunzip(data []byte) ([]byte, error) {
	var err error
	if b.zr == nil {
		b.zr, err = gzip.NewReader(bytes.NewReader(data))
	} else {
		err = b.zr.Reset(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	left := b.Left()
	out, err := io.ReadAll(io.LimitReader(b.zr, left+1))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	before := b.used
	b.used += int64(len(out))
	if int64(len(out)) > left {
		return nil, fmt.Errorf("gzip: %w", &bounded.SizeError{Verb: "inflates to", AtLeast: true, Size: int64(len(out)),
			Before: before, Limit: b.limit, Why: b.why()})
	}
	return out, nil
}
