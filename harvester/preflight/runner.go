package preflight

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/iplease"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// row is one row of the pre-flight's table (table in table.go).
type row struct {
	// name is the check's line in the check verb's output (a Check* constant).
	name string
	// reads is the object of the machine the check judges, which its ok line names (Check.Read).
	reads object
	// given reports whether flags, the flags the check reads, are given (nil: there is always something to
	// check). When they are not, the check makes no request and is skipped: "--FLAG and --FLAG not given".
	given func(in *Input) bool
	flags []string
	// needs are earlier checks this one depends on. It starts at once beside them and waits for one only when it
	// reads what that one found (run.await), so its own reads run at once. When one of them blocks its
	// dependents (run.blocks), this check is skipped with that reason, whatever it found.
	needs []string
	// check makes the check, reporting into r and writing what it finds into its own fields of r.found.
	check func(ctx context.Context, r *run)
	// opens marks the check whose read opens the connection to Harvester: the checks after it start once it has
	// ended, so that their reads go over the connection it opened rather than racing to open their own: with
	// client-go's transport, eight reads started at once on a new client open eight TLS connections (each with
	// its handshake), eight started after one read share its one HTTP/2 connection. Measured with
	// make bench: with every check started at once, the pre-flight took 1.2 times the reference driver's four
	// reads in a row on loopback, where a handshake costs more than a round trip; with the first read alone it
	// took 0.95 to 0.99 times, and 0.82 with 1 ms added to each request.
	opens bool
}

// found is what the checks found that other checks, or the create, need. Each field is written by the one check
// named beside it, in its goroutine, before it ends; a check reads a field only after run.await of its writer,
// which its row must name among its needs.
type found struct {
	namespaceErr error                    // CheckCredential: the namespace's read failed (absent or forbidden); nil when it exists
	denied       []kube.Access            // CheckPermissions: what the credential may not do in the namespace
	reviewed     bool                     // CheckPermissions: the access review was made
	facts        objects.Facts            // CheckImagesKeyPairs: the images' storage classes and key pairs' keys it found
	looked       bool                     // CheckImagesKeyPairs: every image and key pair can be used
	machine      *objects.Machine         // CheckImagesKeyPairs: the machine completed with facts (nil when that failed)
	overlays     []overlayNIC             // CheckNetworks: the VM's NICs on Kube-OVN overlay networks
	data         *dataSecrets             // CheckDataSecrets: what the data Secrets hold; nil when not given or unusable
	addresses    []*objects.StaticAddress // CheckIPPool: the addresses a create would take now; nil without
	leasePool    *iplease.Pool            // CheckIPPool: the lease plan's IPPool, when it can lease each machine an address
	pciClasses   map[string]string        // CheckHostDevices: each PCI resource name's class; nil when not listed
}

// run is one check while it runs: what it reads (the input, the connection, what its needs found) and what it
// reports. Only its own goroutine writes it and its fields of found; the runner reads it once the check has ended.
type run struct {
	in    *Input
	cfg   *config.Config // the machine's configuration (in.Machine.Config())
	c     kube.Interface
	found *found

	p      config.Problems
	u      unchecked
	detail string // what a passed check saw worth telling (Check.Detail)
	// blocks says why the checks that need this one are skipped ("" when they are made).
	blocks string
	// err ends the pre-flight at this check (see fail).
	err     error
	errFlag string

	name  string
	unset string          // why the check was not made: its flags are not given (row.given)
	needs map[string]*run // the checks of row.needs
	done  chan struct{}   // closed when the check has ended
}

// fail ends the pre-flight at this check: err (under flag) makes every later check pointless, such as a
// credential Harvester refuses.
func (r *run) fail(flag string, err error) { r.errFlag, r.err = flag, err }

// await waits until the needed check name has ended, so that its fields of found may be read. Waiting for a check
// the row does not declare in needs is a mistake of the table.
func (r *run) await(name string) {
	need, ok := r.needs[name]
	if !ok {
		panic(fmt.Sprintf("pre-flight check %q waits for check %q without needing it", r.name, name))
	}
	<-need.done
}

// blocked waits for the needed checks to end and returns why one of them blocks its dependents, "" for none: a
// check that is skipped for it need not make its requests in vain. Only a need's own finding counts here (the
// blocks a need inherits is known once every check has ended).
func (r *run) blocked() string {
	for _, need := range r.needs {
		<-need.done
		if need.blocks != "" {
			return need.blocks
		}
	}
	return ""
}

// result is what the check verb reports of r, the check of row rw, with the object it judged. A check with
// nothing to check says so; one that depends on a check that blocks its dependents is skipped with that one's
// reason, and blocks its own dependents for the same.
func (r *run) result(rw row) Check {
	if r.unset != "" {
		return Check{Name: rw.name, Skipped: r.unset}
	}
	for _, need := range rw.needs {
		if why := r.needs[need].blocks; why != "" {
			r.blocks = why
			return Check{Name: rw.name, Skipped: why}
		}
	}
	if r.err != nil {
		return Failed(rw.name, r.errFlag, r.err)
	}
	return Check{Name: rw.name, Read: rw.reads.of(r.in), Detail: r.detail, Skipped: r.u.String(), Problems: r.p.List}
}

// runTable makes the checks of tbl with connection c, all at once but for the waits their needs ask for, and
// returns their Checks in the table's order, ending with the first that fails (run.fail), and what they found.
// A need must be an earlier row, so no check can wait for itself.
func runTable(ctx context.Context, tbl []row, in *Input, c kube.Interface) ([]Check, *found) {
	f := &found{}
	runs := make([]*run, len(tbl))
	byName := map[string]*run{}
	for i, rw := range tbl {
		if byName[rw.name] != nil {
			panic(fmt.Sprintf("pre-flight check %q is in the table twice", rw.name))
		}
		r := &run{in: in, c: c, found: f, name: rw.name, needs: map[string]*run{}, done: make(chan struct{})}
		if in.Machine != nil {
			r.cfg = in.Machine.Config()
		}
		for _, name := range rw.needs {
			need, ok := byName[name]
			if !ok {
				panic(fmt.Sprintf("pre-flight check %q needs %q, which is not an earlier check", rw.name, name))
			}
			r.needs[name] = need
		}
		runs[i], byName[rw.name] = r, r
	}
	var running sync.WaitGroup
	for i, rw := range tbl {
		r := runs[i]
		if rw.given != nil && !rw.given(in) {
			r.unset = "--" + strings.Join(rw.flags, " and --") + " not given"
			close(r.done)
			continue
		}
		running.Go(func() {
			defer close(r.done)
			rw.check(ctx, r)
		})
		if rw.opens {
			<-r.done
		}
	}
	running.Wait()

	checks := make([]Check, 0, len(tbl))
	for i, rw := range tbl {
		check := runs[i].result(rw) // in order: a need's blocks is final before its dependents ask
		checks = append(checks, check)
		if check.err != nil {
			break
		}
	}
	return checks, f
}

// unchecked collects why parts of a check were not made: a read the credential may not make (or that failed
// where failing blocks nothing). They block nothing — PreCreateCheck logs them at debug level — but the check
// verb prints them as "skipped", never "ok": what was not looked at was not found fine.
type unchecked []string

func (u *unchecked) addf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	logging.Debugf("Not checked: %s", msg)
	*u = append(*u, msg)
}

func (u unchecked) String() string { return strings.Join(u, "; ") }
