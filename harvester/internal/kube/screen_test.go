package kube

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// The case: one value of a user-data Secret, shorter than its line, quoted by a refusal, is withheld; the
// words around it are kept.
func TestScreenWithholdsAValueShorterThanItsLine(t *testing.T) {
	s := NewScreen()
	s.HoldString("#cloud-config\nwrite_files:\n- path: /etc/app/env\n  content: |\n    deploy-key=Hx7-pQ2-zW9-kL4-mN8\n    region=eu-1\n")
	got := s.Text(`admission webhook "secrets.example.com" denied the request: key Hx7-pQ2-zW9-kL4-mN8 is in plain text`)
	if want := `admission webhook "secrets.example.com" denied the request: key [withheld] is in plain text`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Runs of fewer than Window bytes of a secret are shown; a value shorter than Window is withheld where it appears
// whole (from minShort bytes); a public name is shown though a secret holds it, and a run that overlaps it is
// not withheld for that; a character is withheld whole.
func TestScreenRules(t *testing.T) {
	s := NewScreen()
	s.HoldString("hostname: gc1-pool1-abc12-x7k9p\nfqdn: checked\n", "Q9xw2Lr7Vb4", "s3cr3t", "abc", "xyzwq-m1-rstuv")
	s.Allow("gc1-pool1-abc12-x7k9p", "checked", "m1")
	for msg, want := range map[string]string{
		"password: Q9xw2Lr7 was refused":                    "password: [withheld] was refused",
		"the word Q9xw2Lr is seven bytes of it":             "the word Q9xw2Lr is seven bytes of it",
		"a short value s3cr3t and abc":                      "a short value [withheld] and abc",
		`virtualmachines "gc1-pool1-abc12-x7k9p" exists`:    `virtualmachines "gc1-pool1-abc12-x7k9p" exists`,
		"hostname: gc1-pool1-abc12-x7k9p":                   "[withheld]gc1-pool1-abc12-x7k9p",
		"vm checked for cluster network mgmt":               "vm checked for cluster network mgmt",
		"a name too short to allow: xyzwq-m1-rstuv":         "a name too short to allow: [withheld]",
		"€Q9xw2Lr7€":                                        "€[withheld]€",
		"nothing of it":                                     "nothing of it",
		"":                                                  "",
		strings.Repeat("x", MaxMessage+10):                  strings.Repeat("x", MaxMessage) + " …",
		"Q9xw2Lr7Vb4 twice: Q9xw2Lr7Vb4, and Q9xw2Lr7Vb4\n": "[withheld] twice: [withheld], and [withheld]\n",
	} {
		if got := s.Text(msg); got != want {
			t.Errorf("%.60q:\n got %.80q\nwant %.80q", msg, got, want)
		}
	}
	if got := (*Screen)(nil).Text("Q9xw2Lr7Vb4"); got != "Q9xw2Lr7Vb4" {
		t.Errorf("a nil screen changed the text: %q", got)
	}
}

// Past its bound the screen fails closed: every message is withheld whole.
func TestScreenFailsClosedPastItsBound(t *testing.T) {
	defer func(n int) { maxWindows = n }(maxWindows)
	maxWindows = 100
	s := NewScreen()
	s.HoldString(strings.Repeat("abcdefghijklmnopqrstuvwxyz", 3)) // 71 runs, 26 distinct
	if got := s.Text("nothing secret"); got != "nothing secret" {
		t.Fatalf("within the bound: %q", got)
	}
	s.HoldString(randomText(rand.New(rand.NewPCG(1, 2)), 200))
	if got := s.Text("nothing secret"); got != notScreenable {
		t.Errorf("past the bound: %q, want %q", got, notScreenable)
	}
}

const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=:/. "

func randomText(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// A property: whatever the secrets and wherever a message repeats a run of Window or more bytes of one, the
// screened message holds no Window-byte run of any secret, and a message that repeats none is left as it is.
func TestScreenProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 5))
	for i := range 2000 {
		secrets := make([]string, 1+r.IntN(4))
		s := NewScreen()
		for j := range secrets {
			secrets[j] = randomText(r, Window+r.IntN(200))
			s.HoldString(secrets[j])
		}
		secret := secrets[r.IntN(len(secrets))]
		n := Window + r.IntN(len(secret)-Window+1)
		at := r.IntN(len(secret) - n + 1)
		before, after := "refused: "+randomText(r, r.IntN(40)), randomText(r, r.IntN(40))
		msg := before + secret[at:at+n] + after
		got := s.Text(msg)
		for _, sec := range secrets {
			for k := 0; k+Window <= len(sec); k++ {
				if strings.Contains(got, sec[k:k+Window]) {
					t.Fatalf("case %d: %q shows %q of secret %q", i, got, sec[k:k+Window], sec)
				}
			}
		}
		if !strings.Contains(got, Withheld) || !strings.HasPrefix(got, "refused: ") {
			t.Fatalf("case %d: %q", i, got)
		}
		if plain := "refused: " + strings.ToUpper(randomText(r, 30)) + "!"; !containsRun(plain, secrets) && s.Text(plain) != plain {
			t.Fatalf("case %d: a message repeating no secret changed: %q", i, s.Text(plain))
		}
	}
}

// containsRun reports whether msg holds a Window-byte run of one of secrets.
func containsRun(msg string, secrets []string) bool {
	for _, sec := range secrets {
		for k := 0; k+Window <= len(sec); k++ {
			if strings.Contains(msg, sec[k:k+Window]) {
				return true
			}
		}
	}
	return false
}

// Text never splits a character, whatever the secrets.
func TestScreenKeepsUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	runes := []rune("aé€𝄞b-")
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(runes[r.IntN(len(runes))])
		}
		return b.String()
	}
	for range 500 {
		s := NewScreen()
		secret := text(10 + r.IntN(20))
		s.HoldString(secret)
		if got := s.Text(text(r.IntN(10)) + secret[3:] + text(r.IntN(10))); !utf8.ValidString(got) {
			t.Fatalf("%q is not UTF-8", got)
		}
	}
}

// Err keeps what the driver reads of a failure Status and screens what it prints; another error keeps its chain.
func TestScreenErr(t *testing.T) {
	s := NewScreen()
	s.HoldString("Q9xw2Lr7Vb4Nc1")
	if err := s.Err(nil); err != nil {
		t.Errorf("nil became %v", err)
	}
	base := errors.New("read tcp: Q9xw2Lr7Vb4Nc1")
	if err := s.Err(base); !errors.Is(err, base) || err.Error() != "read tcp: [withheld]" {
		t.Errorf("a plain error: %v", err)
	}
	redirect := &RedirectError{Server: "h:6443", Status: 302, To: "Q9xw2Lr7Vb4Nc1:443"}
	if err := s.Err(redirect); err != redirect {
		t.Errorf("the driver's own error was screened: %v", err)
	}
}
