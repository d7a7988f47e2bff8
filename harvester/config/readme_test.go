package config

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the flag table in README.md from the flag table")

const (
	readmeFlagsStart = "<!-- flags:start (generated from harvester/config/flags.go: go test ./harvester/config -run README -update-readme) -->"
	readmeFlagsEnd   = "<!-- flags:end -->"
)

// flagsMarkdown renders the flag table for the README.
func flagsMarkdown() string {
	var b strings.Builder
	b.WriteString("| Flag | Environment variable | Type | Default | Description |\n|---|---|---|---|---|\n")
	for _, f := range flagTable {
		kind, def := "string", fmt.Sprintf("`%s`", f.str)
		switch f.kind {
		case intFlag:
			kind, def = "int", fmt.Sprintf("`%d`", f.num)
		case boolFlag:
			kind, def = "bool", "`false`"
		}
		if def == "``" {
			def = ""
		}
		fmt.Fprintf(&b, "| `--%s` | `%s` | %s | %s | %s |\n", f.name, EnvVar(f.name), kind, def, strings.ReplaceAll(f.usage, "|", "\\|"))
	}
	return b.String()
}

func TestREADMEFlagTable(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start, end := strings.Index(readme, readmeFlagsStart), strings.Index(readme, readmeFlagsEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md lacks the generated flag table markers %q … %q", readmeFlagsStart, readmeFlagsEnd)
	}
	want := readme[:start] + readmeFlagsStart + "\n" + flagsMarkdown() + readme[end:]
	if *updateREADME {
		if err := os.WriteFile("../../README.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme != want {
		t.Errorf("README.md's flag table is out of date: run go test ./harvester -run README -update-readme")
	}
}
