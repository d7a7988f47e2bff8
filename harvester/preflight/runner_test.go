package preflight

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// runTestTable runs a test table with an input that has no machine and no connection.
func runTestTable(t *testing.T, tbl []row) ([]Check, *found) {
	t.Helper()
	done := make(chan struct{})
	var (
		checks []Check
		f      *found
	)
	go func() {
		defer close(done)
		checks, f = runTable(context.Background(), tbl, &Input{}, nil)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not end: a check waited for one it does not need")
	}
	return checks, f
}

// awaitOrReport fails the check's run (a problem) when ch is not closed in time.
func awaitOrReport(r *run, ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		r.p.Addf("", "timed out waiting until %s", what)
	}
}

// The checks are reported in the table's order, whatever order they end in.
func TestRunChecksKeepsTheTablesOrder(t *testing.T) {
	var table []row
	next := make(chan struct{}) // the last row ends first, then each row lets the one before it end
	close(next)
	for _, name := range []string{"e", "d", "c", "b", "a"} {
		wait, mine := next, make(chan struct{})
		next = mine
		table = append([]row{{name: name, check: func(_ context.Context, r *run) {
			awaitOrReport(r, wait, "the check after it ended")
			r.detail = "ended"
			close(mine)
		}}}, table...)
	}
	checks, _ := runTestTable(t, table)
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
// b reads what a found once a has ended.
func TestRunChecksWaitsOnlyForWhatANeedFound(t *testing.T) {
	bStarted, cRan := make(chan struct{}), make(chan struct{})
	aFound := errors.New("a's findings")
	var bGot error
	checks, found := runTestTable(t, []row{
		{name: "a", check: func(_ context.Context, r *run) {
			awaitOrReport(r, bStarted, "b started")
			awaitOrReport(r, cRan, "c ran")
			r.found.namespaceErr = aFound
		}},
		{name: "b", needs: []string{"a"}, check: func(_ context.Context, r *run) {
			close(bStarted)
			r.await("a")
			bGot = r.found.namespaceErr
		}},
		{name: "c", check: func(context.Context, *run) { close(cRan) }},
	})
	for _, c := range checks {
		if len(c.Problems) > 0 || c.Skipped != "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if bGot != aFound || found.namespaceErr != aFound {
		t.Errorf("b got %v, the runner returned %v; want a's findings", bGot, found.namespaceErr)
	}
}

// The checks after the one that opens the connection start only once it has ended, and then all at once (c and d
// each wait until the other has started).
func TestRunChecksStartTheRestAfterTheOpeningCheck(t *testing.T) {
	var opened bool
	cStarted, dStarted := make(chan struct{}), make(chan struct{})
	checks, _ := runTestTable(t, []row{
		{name: "open", opens: true, check: func(context.Context, *run) {
			time.Sleep(50 * time.Millisecond) // a later check that started beside it would see opened false
			opened = true
		}},
		{name: "c", check: func(_ context.Context, r *run) {
			if !opened {
				r.p.Addf("", "started before the opening check ended")
			}
			close(cStarted)
			awaitOrReport(r, dStarted, "d started")
		}},
		{name: "d", check: func(_ context.Context, r *run) {
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
	checks, _ := runTestTable(t, []row{
		{name: "namespace", check: func(_ context.Context, r *run) {
			r.p.Addf(config.FlagVMNamespace, "namespace x does not exist")
			r.blocks = "namespace x does not exist"
		}},
		{name: "permissions", needs: []string{"namespace"}, check: func(_ context.Context, r *run) {
			r.p.Addf("", "a problem found in a namespace that does not exist")
		}},
		{name: "after permissions", needs: []string{"permissions"}, check: func(context.Context, *run) {}},
		{name: "unset", needs: []string{"namespace"}, flags: []string{"x", "y"}, given: func(*Input) bool { return false },
			check: func(context.Context, *run) { panic("an unset check ran") }},
		{name: "networks", check: func(_ context.Context, r *run) { r.u.addf("cannot tell") }},
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
	checks, found := runTestTable(t, []row{
		{name: "ok", check: func(context.Context, *run) {}},
		{name: "credential", check: func(_ context.Context, r *run) { r.fail(config.FlagKubeconfigContent, refused) }},
		{name: "later", check: func(_ context.Context, r *run) { r.found.reviewed = true }},
	})
	if len(checks) != 2 || checks[1].err != refused || len(checks[1].Problems) != 1 ||
		checks[1].Problems[0].String() != "--harvester-kubeconfig-content: 401 Unauthorized" {
		t.Errorf("checks %+v, want ok and the failed credential last", checks)
	}
	if !found.reviewed {
		t.Error("the later check did not run")
	}
}

// A table whose check needs a later one (or none of that name), or names a check twice, is refused before any
// check runs: no check could wait for one that has not started.
func TestRunChecksRefusesAMalformedTable(t *testing.T) {
	noop := func(context.Context, *run) {}
	for _, tt := range []struct {
		name  string
		table []row
		want  string
	}{
		{"a later need", []row{{name: "a", needs: []string{"b"}, check: noop}, {name: "b", check: noop}},
			`pre-flight check "a" needs "b", which is not an earlier check`},
		{"twice", []row{{name: "a", check: noop}, {name: "a", check: noop}}, `pre-flight check "a" is in the table twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got, _ := recover().(string); !strings.Contains(got, tt.want) {
					t.Errorf("panic %q, want %q", got, tt.want)
				}
			}()
			runTable(context.Background(), tt.table, &Input{}, nil)
		})
	}
	defer func() {
		if got, _ := recover().(string); !strings.Contains(got, `waits for check "a" without needing it`) {
			t.Errorf("waiting for an undeclared need: panic %q", got)
		}
	}()
	(&run{name: "b"}).await("a")
}
