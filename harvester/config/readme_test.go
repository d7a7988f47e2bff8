package config

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
	"github.com/harvester/docker-machine-driver-harvester/internal/readmetest"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the flag table in docs/options.md from the flag table")

const (
	readmeFlagsStart = "<!-- flags:start (generated from harvester/config/flags.go: go test ./harvester/config -run README -update-readme) -->"
	readmeFlagsEnd   = "<!-- flags:end -->"
)

// flagsMarkdown renders the flag table of docs/options.md: each flag with its environment variable, its field in
// Rancher's HarvesterConfig and that field's type as Rancher carries it (internal/rancher FieldOf: int flags are
// string fields, kubeconfigContent a password one), its type on the command line, its default (the declared one,
// else the one the driver applies: `flags --json`'s applied, which cmd's tests hold the column to) and its usage.
func flagsMarkdown() (string, error) {
	var b strings.Builder
	b.WriteString("| Flag | Environment variable | HarvesterConfig field | Field type | Flag type | Default | Description |\n|---|---|---|---|---|---|---|\n")
	flags := CreateFlags()
	for i, f := range flagTable {
		field, err := rancher.FieldOf(flags[i])
		if err != nil {
			return "", err
		}
		fieldType := field.Type
		kind, def := "string", fmt.Sprintf("`%s`", f.str)
		switch f.kind {
		case intFlag:
			kind, def = "int", fmt.Sprintf("`%d`", f.num)
			fieldType = "string (a whole number, quoted)"
		case boolFlag:
			kind, def = "bool", "`false`"
		}
		switch applied := UsageDefault(f.usage); {
		case f.applied != "":
			def = fmt.Sprintf("`%s` (applied by the driver)", f.applied)
		case def == "``" && applied != "": // a reference flag that declares "" and applies its default (disk bus, NIC model)
			def = fmt.Sprintf("`%s` (applied by the driver)", applied)
		case def == "``":
			def = ""
		}
		fieldCell := fmt.Sprintf("`%s`", field.Name)
		for _, r := range rancher.Rules { // TestFlagsRoundTripThroughRancher refuses such a flag; say what Rancher does
			if back := r.Flag("harvester", field.Name); back != "--"+f.name {
				fieldCell += fmt.Sprintf(" (%s passes `%s`)", r.Name, back)
			}
		}
		fmt.Fprintf(&b, "| `--%s` | `%s` | %s | %s | %s | %s | %s |\n", f.name, EnvVar(f.name), fieldCell, fieldType, kind, def, strings.ReplaceAll(f.usage, "|", "\\|"))
	}
	return b.String(), nil
}

func TestREADMEFlagTable(t *testing.T) {
	table, err := flagsMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	readmetest.Generated(t, "../../docs/options.md", readmeFlagsStart, readmeFlagsEnd, table,
		"go test ./harvester/config -run README -update-readme", *updateREADME)
}
