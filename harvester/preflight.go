package harvester

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

// preflightCheck is one row of the pre-flight's table (preflightChecks in precreate.go).
type preflightCheck struct {
	// name is the check's line in the check verb's output (a Check* constant).
	name string
	// given reports whether flags, the flags the check reads, are given (nil: there is always something to
	// check). When they are not, the check makes no request and is skipped: "--FLAG and --FLAG not given".
	given func(cfg *config.Config) bool
	flags []string
	// needs are earlier checks this one depends on. It starts at once beside them and waits for one only when it
	// asks what that one found (checkRun.findingsOf), so its own reads run at once. When one of them blocks its
	// dependents (checkRun.blocks), this check is skipped with that reason, whatever it found.
	needs []string
	// run makes the check, reporting into r.
	run func(ctx context.Context, r *checkRun)
	// opens marks the check whose read opens the connection to Harvester: the checks after it start once it has
	// ended, so that their reads go over the connection it opened rather than racing to open their own: with
	// client-go's transport, eight reads started at once on a new client open eight TLS connections (each with
	// its handshake), eight started after one read share its one HTTP/2 connection. Measured with
	// make bench: with every check started at once, the pre-flight took 1.2 times the reference driver's four
	// reads in a row on loopback, where a handshake costs more than a round trip; with the first read alone it
	// took 0.95 to 0.99 times, and 0.82 with 1 ms added to each request.
	opens bool
}

// checkRun is one check while it runs: what it reads (the driver, the connection, what its needs found) and what
// it reports. Only its own goroutine writes it; runChecks reads it once the check has ended. The driver is only
// read while the checks run: what a check finds for later use is its findings, which the caller of runChecks
// keeps.
type checkRun struct {
	*Driver
	c kube.Interface

	p      config.Problems
	u      unchecked
	detail string // what a passed check saw worth telling (Check.Detail)
	// findings is what the check found for the checks that need it (findingsOf); nil for nothing.
	findings any
	// blocks says why the checks that need this one are skipped ("" when they are made).
	blocks string
	// err ends the pre-flight at this check (see fail).
	err     error
	errFlag string

	unset string               // why the check was not made: its flags are not given (preflightCheck.given)
	needs map[string]*checkRun // the checks of preflightCheck.needs
	done  chan struct{}        // closed when the check has ended
}

// fail ends the pre-flight at this check: err (under flag) makes every later check pointless, such as a
// credential Harvester refuses.
func (r *checkRun) fail(flag string, err error) { r.errFlag, r.err = flag, err }

// findingsOf waits for the needed check name to end and returns what it found. Asking for a check the row does
// not declare in needs is a mistake of the table.
func (r *checkRun) findingsOf(name string) any {
	need, ok := r.needs[name]
	if !ok {
		panic(fmt.Sprintf("a pre-flight check asks what check %q found without needing it", name))
	}
	<-need.done
	return need.findings
}

// blocked waits for the needed checks to end and returns why one of them blocks its dependents, "" for none: a
// check that is skipped for it need not make its requests in vain. Only a need's own finding counts here (the
// blocks a need inherits is known once every check has ended).
func (r *checkRun) blocked() string {
	for _, need := range r.needs {
		<-need.done
		if need.blocks != "" {
			return need.blocks
		}
	}
	return ""
}

// check is what the check verb reports of r. A check with nothing to check says so; one that depends on a check
// that blocks its dependents is skipped with that one's reason, and blocks its own dependents for the same.
func (r *checkRun) check(name string, needs []string) Check {
	if r.unset != "" {
		return Check{Name: name, Skipped: r.unset}
	}
	for _, need := range needs {
		if why := r.needs[need].blocks; why != "" {
			r.blocks = why
			return Check{Name: name, Skipped: why}
		}
	}
	if r.err != nil {
		return failed(name, r.errFlag, r.err)
	}
	return Check{Name: name, Detail: r.detail, Skipped: r.u.String(), Problems: r.p.List}
}

// runChecks makes the checks of table with connection c, all at once but for the waits their needs ask for, and
// returns their Checks in the table's order, ending with the first that fails (checkRun.fail), and what each
// check found by name. A need must be an earlier row, so no check can wait for itself.
func runChecks(ctx context.Context, table []preflightCheck, d *Driver, c kube.Interface) ([]Check, map[string]any) {
	runs := make([]*checkRun, len(table))
	byName := map[string]*checkRun{}
	for i, row := range table {
		if byName[row.name] != nil {
			panic(fmt.Sprintf("pre-flight check %q is in the table twice", row.name))
		}
		r := &checkRun{Driver: d, c: c, needs: map[string]*checkRun{}, done: make(chan struct{})}
		for _, name := range row.needs {
			need, ok := byName[name]
			if !ok {
				panic(fmt.Sprintf("pre-flight check %q needs %q, which is not an earlier check", row.name, name))
			}
			r.needs[name] = need
		}
		runs[i], byName[row.name] = r, r
	}
	var running sync.WaitGroup
	for i, row := range table {
		r := runs[i]
		if row.given != nil && !row.given(d.cfg) {
			r.unset = "--" + strings.Join(row.flags, " and --") + " not given"
			close(r.done)
			continue
		}
		running.Go(func() {
			defer close(r.done)
			row.run(ctx, r)
		})
		if row.opens {
			<-r.done
		}
	}
	running.Wait()

	found := make(map[string]any, len(table))
	for name, r := range byName {
		found[name] = r.findings
	}
	checks := make([]Check, 0, len(table))
	for i, row := range table {
		check := runs[i].check(row.name, row.needs) // in order: a need's blocks is final before its dependents ask
		checks = append(checks, check)
		if check.err != nil {
			break
		}
	}
	return checks, found
}
