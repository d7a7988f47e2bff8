package main

import (
	"reflect"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester"
)

// `flags --json` carries the driver's permission table (harvester.Permissions), each need's flags named as the
// flag table names them under the driver's name; printing it under one name leaves the table of another as it was.
func TestFlagsVerbPrintsThePermissions(t *testing.T) {
	for _, driver := range []string{"hcivm", "harvester", "hcivm"} {
		doc := flagsOf(t, "--json", "--driver", driver)
		flags := map[string]bool{}
		for _, e := range doc.Flags {
			flags[e.Flag] = true
		}
		needs := harvester.Permissions()
		if len(doc.Permissions) != len(needs) {
			t.Fatalf("%s: %d needs, the driver has %d", driver, len(doc.Permissions), len(needs))
		}
		for i, n := range doc.Permissions {
			if n.When != needs[i].When || n.Where != needs[i].Where || !reflect.DeepEqual(n.Access, needs[i].Access) || len(n.Flags) != len(needs[i].Flags) {
				t.Errorf("%s: need %d is %+v, the driver's %+v", driver, i, n, needs[i])
			}
			for _, f := range n.Flags {
				if !flags[f] {
					t.Errorf("%s: %s names %s, not a flag of its flag table", driver, n.When, f)
				}
			}
		}
	}
}
