package kube

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// What the cluster says may repeat what the driver sent it or holds: an admission webhook or policy quoting the
// object it judges (a line of the cloud-init Secret, one value of the user data), a hostile or broken server
// echoing a request, a condition quoting a guest's output. The driver prints those messages (check's lines, a
// create's error, the readiness wait's last state) where people read them who may not read Harvester's Secrets
// (Rancher's provisioning log), and they must never show a secret. So every message that comes from the cluster
// passes the client's Screen before any code of the driver sees it (screen_client.go: the errors, the Status of a
// watch's error event, the status messages of the objects returned), and the Screen withholds in it every run of
// Window bytes that is part of a secret the driver holds. The secrets are held as the driver learns them, before
// any call whose answer could repeat them: every Secret the client writes or reads (the cloud-init Secret, the
// data Secrets, the guest account's token; screen_client.go), the configuration's (the SSH password, the user
// data, Rancher's install script, the guest kubeconfig's credential; harvester's Driver.api) and the credential's
// token, client key and password (harvester/connection).
//
// The driver's own words never pass the screen: only the cluster's text does, so the driver's messages keep a
// namespace or a field name that a secret happens to hold. The names the cluster repeats — the machine's, its
// namespace's, its Secret's — are public (Allow): the user data holds the machine's name as its hostname, and a
// message naming the VM must not lose the name.
//
// Bounds. The index holds each distinct Window-byte run of the held values once, 8 bytes each, sorted: at most
// MaxWindows runs, 48 MiB (and a Hold takes at most MaxWindows runs at once, sorted before they are merged). The
// driver's secrets are far fewer: user data at most 1 MiB, the data Secrets' values at most 1 MiB each, the
// cloud-init Secret at most 1 MiB (and its base64), the tokens a few KiB, so about 4.5 Mi runs in the worst case
// and a few thousand in the usual one. Past MaxWindows the screen fails closed: every message of the cluster is
// withheld whole. A message is screened in O(m log n) time and O(m) memory for its m bytes (at most MaxMessage;
// the rest is cut) against n runs; a Hold of k runs costs O(k log k + n). Measured on this project's 2 shared
// cores: 3 Mi runs held (3 MiB of secrets) take 42 MiB of heap; a message of 1,000 bytes is screened against
// them in 0.14 ms, one of 64 KiB in 150 ms; holding 1 MiB takes 0.4 s.

// Window is the shortest run of a secret's bytes the Screen withholds. A held value shorter than Window is
// withheld where it appears whole (if at least minShort bytes: shorter ones are no secret a screen can tell from
// words).
const (
	Window   = 8
	minShort = 4
)

// Bounds of a Screen (see above): the distinct runs it indexes (8 bytes each), the bytes of a message it screens,
// the public names.
const (
	MaxWindows = 6 << 20
	MaxMessage = 64 << 10
	maxPublic  = 64
)

// maxWindows is MaxWindows; tests lower it.
var maxWindows = MaxWindows

// Withheld stands in a message for a run of it that repeats a secret.
const Withheld = "[withheld]"

// notScreenable is a message of the cluster once the screen holds more than MaxWindows runs.
const notScreenable = "(Harvester's message is not shown: the driver holds more secret data than it screens messages against)"

// Screen withholds the secrets the driver holds from the cluster's messages. Its methods are safe for concurrent
// use; the zero Screen holds nothing.
type Screen struct {
	mu       sync.RWMutex
	windows  []uint64 // every Window-byte run of the held values, big-endian, sorted and distinct
	short    []string // held values shorter than Window, withheld whole
	public   []string // names the cluster repeats, at least minShort bytes long
	overflow bool     // the held values have more than MaxWindows distinct runs
}

// NewScreen returns an empty Screen.
func NewScreen() *Screen { return &Screen{} }

// Hold adds secrets: from now on no message of the cluster shows a run of Window bytes of any of them.
func (s *Screen) Hold(values ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := 0
	for _, v := range values {
		switch {
		case len(v) < minShort:
		case len(v) < Window:
			if !slices.Contains(s.short, string(v)) && len(s.short) < maxPublic {
				s.short = append(s.short, string(v))
			}
		default:
			runs += len(v) - Window + 1
		}
	}
	if runs == 0 || s.overflow {
		return
	}
	if runs > maxWindows {
		s.overflow, s.windows = true, nil
		return
	}
	fresh := make([]uint64, 0, runs)
	for _, v := range values {
		for i := 0; i+Window <= len(v); i++ {
			fresh = append(fresh, binary.BigEndian.Uint64(v[i:]))
		}
	}
	slices.Sort(fresh)
	fresh = slices.Compact(fresh)
	merged := make([]uint64, 0, len(s.windows)+len(fresh))
	for i, j := 0, 0; i < len(s.windows) || j < len(fresh); { // both sorted: merged sorted, each run once
		switch {
		case j == len(fresh) || (i < len(s.windows) && s.windows[i] < fresh[j]):
			merged = append(merged, s.windows[i])
			i++
		case i == len(s.windows) || fresh[j] < s.windows[i]:
			merged = append(merged, fresh[j])
			j++
		default:
			merged = append(merged, fresh[j])
			i, j = i+1, j+1
		}
	}
	if len(merged) > maxWindows {
		s.overflow, s.windows = true, nil
		return
	}
	s.windows = slices.Clip(merged)
}

// HoldString is Hold for strings.
func (s *Screen) HoldString(values ...string) {
	bs := make([][]byte, len(values))
	for i, v := range values {
		bs[i] = []byte(v)
	}
	s.Hold(bs...)
}

// Allow names text the cluster repeats that is no secret although a secret may hold it: the machine's name, its
// namespace. A run of a message that overlaps one of them is not withheld for that ("hostname: m1-abc" holds
// " m1-abc", which "VM m1-abc not found" repeats); a run of 8 bytes of a secret that overlaps none still is. Names
// shorter than minShort bytes are not allowed: they occur by chance inside secrets.
func (s *Screen) Allow(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if len(n) >= minShort && len(s.public) < maxPublic && !slices.Contains(s.public, n) {
			s.public = append(s.public, n)
		}
	}
}

// Text returns msg, a message of the cluster, with every run that repeats a held secret replaced by Withheld,
// cut at MaxMessage bytes.
func (s *Screen) Text(msg string) string {
	if s == nil {
		return msg
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.overflow:
		return notScreenable
	case len(s.windows) == 0 && len(s.short) == 0:
		return msg
	}
	if len(msg) > MaxMessage {
		cut := MaxMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + " …"
	}
	public := make([]bool, len(msg))
	for _, p := range s.public {
		markAll(public, msg, p)
	}
	withheld := make([]bool, len(msg))
	for i := 0; i+Window <= len(msg); i++ {
		if _, found := slices.BinarySearch(s.windows, binary.BigEndian.Uint64([]byte(msg[i:i+Window]))); found &&
			!slices.Contains(public[i:i+Window], true) {
			fill(withheld, i, i+Window)
		}
	}
	for _, v := range s.short {
		markAll(withheld, msg, v)
	}
	return replaceMarked(msg, withheld)
}

// markAll marks in marks the bytes of every occurrence of sub in msg.
func markAll(marks []bool, msg, sub string) {
	for i := 0; ; {
		j := strings.Index(msg[i:], sub)
		if j < 0 {
			return
		}
		fill(marks, i+j, i+j+len(sub))
		i += j + 1
	}
}

func fill(marks []bool, from, to int) {
	for k := from; k < to; k++ {
		marks[k] = true
	}
}

// replaceMarked replaces each run of marked bytes of msg, widened to whole characters, by Withheld.
func replaceMarked(msg string, marks []bool) string {
	if !slices.Contains(marks, true) {
		return msg
	}
	for i := range marks { // a character is withheld whole when any byte of it is
		if marks[i] {
			for j := i; j > 0 && !utf8.RuneStart(msg[j]); j-- {
				marks[j-1] = true
			}
			for j := i + 1; j < len(msg) && !utf8.RuneStart(msg[j]); j++ {
				marks[j] = true
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		switch {
		case !marks[i]:
			b.WriteByte(msg[i])
		case i == 0 || !marks[i-1]:
			b.WriteString(Withheld)
		}
	}
	return b.String()
}
