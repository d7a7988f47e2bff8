package harvester

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// runTable runs a test table with a driver that has an empty configuration and no connection.
func runTable(t *testing.T, table []preflightCheck) ([]Check, map[string]any) {
	t.Helper()
	done := make(chan struct{})
	var (
		checks []Check
		found  map[string]any
	)
	go func() {
		defer close(done)
		checks, found = runChecks(context.Background(), table, &Driver{cfg: &config.Config{}}, nil)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not end: a check waited for one it does not need")
	}
	return checks, found
}

// awaitOrReport fails the check's run (a problem) when ch is not closed in time.
func awaitOrReport(r *checkRun, ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		r.p.Addf("", "timed out waiting until %s", what)
	}
}

// The checks are reported in the table's order, whatever order they end in.
func TestRunChecksKeepsTheTablesOrder(t *testing.T) {
	var table []preflightCheck
	next := make(chan struct{}) // the last row ends first, then each row lets the one before it end
	close(next)
	for _, name := range []string{"e", "d", "c", "b", "a"} {
		wait, mine := next, make(chan struct{})
		next = mine
		table = append([]preflightCheck{{name: name, run: func(_ context.Context, r *checkRun) {
			awaitOrReport(r, wait, "the check after it ended")
			r.detail = "ended"
			close(mine)
		}}}, table...)
	}
	checks, _ := runTable(t, table)
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		if c.Detail != "ended" || len(c.Problems) > 0 {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if want := []string{"a", "b", "c", "d", "e"}; !reflect.DeepEqual(names, want) {
		t.Errorf("checks in order %v, want the table's %v", names, want)
	}
}

// A check waits only for what it needs: it starts beside its need and makes its own part first (b tells it has
// started before a may end), and a check that needs nothing does not wait for anyone (a waits until c has run).
// b gets what a found.
func TestRunChecksWaitsOnlyForWhatANeedFound(t *testing.T) {
	bStarted, cRan := make(chan struct{}), make(chan struct{})
	var bGot any
	checks, found := runTable(t, []preflightCheck{
		{name: "a", run: func(_ context.Context, r *checkRun) {
			awaitOrReport(r, bStarted, "b started")
			awaitOrReport(r, cRan, "c ran")
			r.findings = "a's findings"
		}},
		{name: "b", needs: []string{"a"}, run: func(_ context.Context, r *checkRun) {
			close(bStarted)
			bGot = r.findingsOf("a")
		}},
		{name: "c", run: func(context.Context, *checkRun) { close(cRan) }},
	})
	for _, c := range checks {
		if len(c.Problems) > 0 || c.Skipped != "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if bGot != "a's findings" || found["a"] != "a's findings" {
		t.Errorf("b got %v, the runner returned %v; want a's findings", bGot, found)
	}
}

// The checks after the one that opens the connection start only once it has ended, and then all at once (c and d
// each wait until the other has started).
func TestRunChecksStartTheRestAfterTheOpeningCheck(t *testing.T) {
	var opened bool
	cStarted, dStarted := make(chan struct{}), make(chan struct{})
	checks, _ := runTable(t, []preflightCheck{
		{name: "open", opens: true, run: func(context.Context, *checkRun) {
			time.Sleep(50 * time.Millisecond) // a later check that started beside it would see opened false
			opened = true
		}},
		{name: "c", run: func(_ context.Context, r *checkRun) {
			if !opened {
				r.p.Addf("", "started before the opening check ended")
			}
			close(cStarted)
			awaitOrReport(r, dStarted, "d started")
		}},
		{name: "d", run: func(_ context.Context, r *checkRun) {
			close(dStarted)
			awaitOrReport(r, cStarted, "c started")
		}},
	})
	for _, c := range checks {
		if len(c.Problems) > 0 || c.Skipped != "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
}

// A check whose need blocks its dependents is skipped with that need's reason, whatever it found, and so are the
// checks that need it; a check with nothing to check says that instead; the others are reported as they are.
func TestRunChecksSkipsWhatDependsOnABlockingCheck(t *testing.T) {
	checks, _ := runTable(t, []preflightCheck{
		{name: "namespace", run: func(_ context.Context, r *checkRun) {
			r.p.Addf(config.FlagVMNamespace, "namespace x does not exist")
			r.blocks = "namespace x does not exist"
		}},
		{name: "permissions", needs: []string{"namespace"}, run: func(_ context.Context, r *checkRun) {
			r.p.Addf("", "a problem found in a namespace that does not exist")
		}},
		{name: "after permissions", needs: []string{"permissions"}, run: func(context.Context, *checkRun) {}},
		{name: "unset", needs: []string{"namespace"}, flags: []string{"x", "y"}, given: func(*config.Config) bool { return false },
			run: func(context.Context, *checkRun) { panic("an unset check ran") }},
		{name: "networks", run: func(_ context.Context, r *checkRun) { r.u.addf("cannot tell") }},
	})
	want := []Check{
		{Name: "namespace", Problems: []config.Problem{{Flag: config.FlagVMNamespace, Message: "namespace x does not exist"}}},
		{Name: "permissions", Skipped: "namespace x does not exist"},
		{Name: "after permissions", Skipped: "namespace x does not exist"},
		{Name: "unset", Skipped: "--x and --y not given"},
		{Name: "networks", Skipped: "cannot tell"},
	}
	if !reflect.DeepEqual(checks, want) {
		t.Errorf("checks:\n%+v\nwant:\n%+v", checks, want)
	}
}

// A check that fails ends the report with its line; the others still ran, and what they found is returned.
func TestRunChecksEndsAtAFailure(t *testing.T) {
	refused := errors.New("401 Unauthorized")
	checks, found := runTable(t, []preflightCheck{
		{name: "ok", run: func(context.Context, *checkRun) {}},
		{name: "credential", run: func(_ context.Context, r *checkRun) { r.fail(config.FlagKubeconfigContent, refused) }},
		{name: "later", run: func(_ context.Context, r *checkRun) { r.findings = "ran" }},
	})
	if len(checks) != 2 || checks[1].err != refused || len(checks[1].Problems) != 1 ||
		checks[1].Problems[0].String() != "--harvester-kubeconfig-content: 401 Unauthorized" {
		t.Errorf("checks %+v, want ok and the failed credential last", checks)
	}
	if found["later"] != "ran" {
		t.Errorf("found %v: the later check did not run", found)
	}
}

// A table whose check needs a later one (or none of that name), or names a check twice, is refused before any
// check runs: no check could wait for one that has not started.
func TestRunChecksRefusesAMalformedTable(t *testing.T) {
	noop := func(context.Context, *checkRun) {}
	for _, tt := range []struct {
		name  string
		table []preflightCheck
		want  string
	}{
		{"a later need", []preflightCheck{{name: "a", needs: []string{"b"}, run: noop}, {name: "b", run: noop}},
			`pre-flight check "a" needs "b", which is not an earlier check`},
		{"twice", []preflightCheck{{name: "a", run: noop}, {name: "a", run: noop}}, `pre-flight check "a" is in the table twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got, _ := recover().(string); !strings.Contains(got, tt.want) {
					t.Errorf("panic %q, want %q", got, tt.want)
				}
			}()
			runChecks(context.Background(), tt.table, &Driver{cfg: &config.Config{}}, nil)
		})
	}
	defer func() {
		if got, _ := recover().(string); !strings.Contains(got, `asks what check "a" found without needing it`) {
			t.Errorf("asking an undeclared need: panic %q", got)
		}
	}()
	(&checkRun{}).findingsOf("a")
}
