package main

import (
	"os"
	"strings"
	"testing"
)

// The Default column of docs/options.md's flag table is what `flags --json` says the driver applies to each flag:
// its declared default, or the one the driver applies when it declares none (a blank cell when there is none).
func TestOptionsDefaultsAreFlagsJSON(t *testing.T) {
	raw, err := os.ReadFile("../../docs/options.md")
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]string{} // flag → its Default cell
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		// | Flag | Environment variable | HarvesterConfig field | Field type | Flag type | Default | Description |
		cols := strings.Split(line, " | ")
		if len(cols) < 7 {
			t.Fatalf("a flag row of fewer columns than the table's: %s", line)
		}
		cells[strings.Trim(cols[0], "|` -")] = cols[5]
	}
	doc := flagsOf(t, "--json")
	for _, e := range doc.Flags {
		cell, ok := cells[e.Flag]
		if !ok {
			t.Errorf("docs/options.md has no row of --%s", e.Flag)
			continue
		}
		value, _, _ := strings.Cut(strings.TrimPrefix(cell, "`"), "`")
		if e.Applied == "" && cell != "" || e.Applied != "" && (!strings.HasPrefix(cell, "`") || value != e.Applied) {
			t.Errorf("--%s: docs/options.md's Default column says %q, flags --json's applied default is %q", e.Flag, cell, e.Applied)
		}
	}
	if len(cells) != len(doc.Flags) {
		t.Errorf("docs/options.md's table has %d flag rows, flags --json %d flags", len(cells), len(doc.Flags))
	}
}
