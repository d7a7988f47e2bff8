package config

import (
	"errors"
	"reflect"
	"testing"
)

// A command line is read past every problem, and each is told under its flag, in order: Go's flag package would
// stop at the first.
func TestParseArgsTellsEveryProblem(t *testing.T) {
	env := func(name string) (string, bool) { return "lots", name == "HARVESTER_MEMORY_SIZE" }
	_, err := ParseArgs([]string{"--harvester-cpu-count", "two", "--harvester-enable-efi=maybe", "--frobnicate", "value",
		"---bad", "stray", "--harvester-ssh-port=99999999999999999999", "--harvester-disk-size"}, env, nil)
	var problems *ArgsError
	if !errors.As(err, &problems) {
		t.Fatalf("error %v, want an *ArgsError", err)
	}
	want := []string{
		`--harvester-cpu-count: must be a whole number, got "two"`,
		`--harvester-enable-efi: must be true or false, got "maybe"`,
		"flag provided but not defined: -frobnicate", // its value, "value", is not told again
		"bad flag syntax: ---bad",
		`unexpected argument "stray"`,
		`--harvester-ssh-port: must be a whole number, got "99999999999999999999"`,
		"flag needs an argument: -harvester-disk-size",
		`$HARVESTER_MEMORY_SIZE: must be a whole number, got "lots"`,
	}
	if !reflect.DeepEqual(problems.Problems, want) {
		t.Errorf("problems\n%q\nwant\n%q", problems.Problems, want)
	}
	if got := err.Error(); got != "8 problems with the command line:\n  "+want[0]+"\n  "+want[1]+"\n  "+want[2]+"\n  "+want[3]+
		"\n  "+want[4]+"\n  "+want[5]+"\n  "+want[6]+"\n  "+want[7] {
		t.Errorf("message:\n%s", got)
	}
	// One problem is told alone.
	if _, err := ParseArgs([]string{"--harvester-cpu-count", "two"}, nil, nil); err == nil || err.Error() != `--harvester-cpu-count: must be a whole number, got "two"` {
		t.Errorf("one problem: %v", err)
	}
	// What is right is read as before.
	o, err := ParseArgs([]string{"--harvester-cpu-count", "4", "--harvester-enable-efi", "--harvester-disk-size=40"}, nil, nil)
	if err != nil || o.Int(FlagCPUCount) != 4 || !o.Bool(FlagEnableEFI) || o.Int(FlagDiskSize) != 40 {
		t.Errorf("a valid command line: %v, %v", o, err)
	}
}
