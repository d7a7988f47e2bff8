package doccheck

import "testing"

// A quote is printed when each of its words is a message's own, in place, or a value's: the words around a message
// that no code prints (a stale wording) make it no quote, though the message's pattern is found in it.
func TestPrinted(t *testing.T) {
	p := NewPrinted([]string{
		"image %s does not exist",
		"the Harvester kubeconfig %w",
		"is refused: a kubeconfig given as content may carry its credential only inline; %s",
		"the range %s is exhausted",
		", %d of them to creates still in flight",
		". Remove machines that hold one",
		"has a run of more than %d digits",
		"the VM was replaced",
	}, []string{"cannot %s %s: %w", "pool %s: %v", "problem  %-20s  %s"}, []string{"images and key pairs"})
	for _, tc := range []struct {
		quote string
		want  bool
	}{
		{"--harvester-image-name: image default/jammy does not exist", true},
		{"problem images and key pairs --harvester-image-name: image default/jammy does not exist", true},
		{"check: invalid machine configuration: --harvester-image-name: image <ns>/<name> does not exist", true},
		{"the image default/jammy does not exist", false},                       // a word no message prints before it
		{"image default/jammy does not exist in Harvester", false},              // nor after it
		{"image default/jammy does not exist …", true},                          // the rest left out
		{"problem zones and regions image default/jammy does not exist", false}, // no such check line
		{"the Harvester kubeconfig is refused: a kubeconfig given as content may carry its credential only inline; its user \"a\" uses exec", true},
		{"the Harvester kubeconfig --harvester-kubeconfig-content: its user <name> uses exec", false}, // the stale wording
		{"the Harvester kubeconfig <why>", true},
		{"the Harvester kubeconfig", false},
		{"the range 10.0.0.10-10.0.0.59/24 is exhausted, 2 of them to creates still in flight. Remove machines that hold one", true},
		{"… has a run of more than 64 digits", true},
		{"cannot mark the volumes of VM <ns>/<name> for removal: … the VM was replaced", true},
		{"cannot mark the volumes of VM <ns>/<name> for removal: the VM was replaced indeed", false},
		{"pool guests: image x does not exist", true},
	} {
		if got := p.Quote(Normalize(tc.quote)); got != tc.want {
			t.Errorf("Quote(%q) = %v, want %v", tc.quote, got, tc.want)
		}
	}
}
