// Package preflight is a create's pre-flight: it judges the objects a create of the machine would send — the VM
// with --harvester-vm-patch applied, its claims, its cloud-init Secret, the plan of its static addresses
// (objects.Machine) — against the live cluster, and creates nothing. It first reads what the objects need from the
// cluster (the credential and namespace, the images and key pairs, the data Secrets) and completes the machine
// with it; every other check reads the machine: the quota its VM's limits, volumes and devices, the host devices
// and their capacity the VM's devices, the networks the VM's networks, the objects a patch gives the guest the VM's
// volumes, the IP pool and the load-balancer pools the address plan or the lease plan, the cluster's admission
// the Secret and the VM themselves (the check verb's dry runs). So what the pre-flight judges is what the create sends.
//
// The checks are a table (table.go), one row a line of the check verb, run at once but for what one needs of
// another (runner.go). Run returns one typed Result: every check's line, and the completed machine the create
// sends. It talks to the cluster through harvester/internal/kube only; package harvester, the lifecycle, calls it
// from PreCreateCheck and the check verb, and never the other way round (layers_test.go).
package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
	"github.com/harvester/docker-machine-driver-harvester/harvester/objects"
)

// Input is what the pre-flight judges, and what it judges it with.
type Input struct {
	// Machine is the machine's objects as objects.ParseConfig built them: the pre-flight completes them with what
	// it reads.
	Machine *objects.Machine
	// Draw is what the create drew (its claims' suffix, its id), written into the completed machine.
	Draw objects.Draw
	// Machines is how many machines of this configuration are checked at once (a pool's quantity, at most
	// MaxPoolSize); 0 means one.
	Machines int
	// Needed is what the machine's life needs in its namespace (the create, the readiness watch, a later
	// remove): the access review asks for it.
	Needed []kube.Access
	// CredentialExpiry tells what is known of when the credential's token expires, asked by the credential's check
	// (for a Rancher token, Rancher is asked the first time); nil: nothing is known.
	CredentialExpiry func(context.Context) connection.Expiry
	// Admission, when set, asks the cluster's admission about the create's Secret and VM with dry runs after the
	// pre-flight's checks (CheckAdmission, the check verb's last line).
	Admission *Admission
}

// Admission is what the admission's dry runs stand in for what only a create learns.
type Admission struct {
	// SSHKey is the machine's public key, authorized_keys form: the key of --harvester-ssh-private-key-path, or a
	// new one of the kind a create makes.
	SSHKey string
}

// Result is what a pre-flight found.
type Result struct {
	// Checks are every check's line, in the table's order; the last is the failure that ended the pre-flight,
	// when one did.
	Checks []Check
	// Machine is the machine completed with what the pre-flight read, as the checks judged it and the create
	// sends it (objects.Machine.Objects); nil when the pre-flight could not read what it needs (a check says
	// why).
	Machine *objects.Machine
	// Draft is the machine as its configuration made it, before the pre-flight read anything (Input.Machine).
	Draft *objects.Machine
	// PCIClasses are the PCI class (status.classId, "0302") of each resource name among Harvester's PCI devices,
	// as the host devices' check listed them; nil when it did not list them (no host device, or not readable).
	PCIClasses map[string]string
}

// Err is the pre-flight's verdict: the failure that ended it, else every problem of every check as one error,
// titled as a create reports it; nil when Harvester would take the machine.
func (r Result) Err() error {
	var p config.Problems
	for _, c := range r.Checks {
		if c.err != nil {
			return c.err
		}
		p.List = append(p.List, c.Problems...)
	}
	return p.ErrTitled("cannot create the machine on Harvester")
}

// Run makes the pre-flight's checks of in with connection c, then the check verb's admission when in asks for it,
// and returns what they found. It creates and changes nothing: it only reads, asks the API server what the
// credential may do (SelfSubject*Reviews, which store nothing) and, for the admission, sends the Secret and the VM
// as dry runs (stored neither).
func Run(ctx context.Context, c kube.Interface, in Input) Result {
	cfg := in.Machine.Config()
	logging.Infof("Checking Harvester (%s) for VM %s/%s", c.Server(), cfg.Namespace, cfg.MachineName)
	tbl := table
	if in.Admission != nil {
		tbl = append(append([]row(nil), table...), admissionRow)
	}
	checks, f := runTable(ctx, tbl, &in, c)
	return Result{Checks: checks, Machine: f.completed(in.Draw), Draft: in.Machine, PCIClasses: f.pciClasses}
}

// completed is the machine completed with every fact the checks found and draw, or nil when one of them could not
// be read.
func (f *found) completed(draw objects.Draw) *objects.Machine {
	if f.machine == nil || !f.looked {
		return nil
	}
	facts := f.facts
	if f.data != nil {
		facts.UserData, facts.NetworkData = f.data.user, f.data.network
	}
	m, err := f.machine.Complete(facts, draw)
	if err != nil || m.Incomplete() != "" {
		return nil
	}
	return m
}

// Check is one pre-flight check and what it found: it passed when Problems is empty and Skipped is "".
type Check struct {
	Name string
	// Read names the object of the machine the check judged ("of VM default/m1"), "" for one that judges none:
	// its ok line says it.
	Read string
	// Detail is what a passed check saw worth telling ("" for nothing).
	Detail string
	// Skipped says why the check, or part of it, was not made: it depends on one that failed, nothing is
	// configured for it, or the credential may not make a read it needs (the unchecked parts, "; "-joined).
	Skipped  string
	Problems []config.Problem
	// err ends the pre-flight: a failure that makes every further check pointless (the credential is refused,
	// Harvester cannot be reached). It is also in Problems.
	err error
}

// Failed is a check that ended the pre-flight with err, under flag.
func Failed(name, flag string, err error) Check {
	return Check{Name: name, Problems: []config.Problem{{Flag: flag, Message: config.Redact(err.Error())}}, err: err}
}

// Lines is how the check verb prints c: a "problem" line for each problem, a "skipped" line with why, or an "ok"
// line with what it judged and saw. A check is ok only when it found nothing wrong and looked at everything: a
// part the credential may not read is "skipped" with why, also beside the problems another part found. word
// rewrites each text (the flag names under the driver's name); each reason is kept on its line.
func (c Check) Lines(word func(string) string) []string {
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var lines []string
	for _, p := range c.Problems {
		lines = append(lines, fmt.Sprintf("problem  %-20s  %s", c.Name, word(oneLine(p.String()))))
	}
	if c.Skipped != "" {
		lines = append(lines, fmt.Sprintf("skipped  %-20s  %s", c.Name, word(oneLine(c.Skipped))))
	}
	if len(c.Problems) == 0 && c.Skipped == "" {
		saw := c.Detail
		switch {
		case c.Read != "" && saw != "":
			saw = c.Read + ": " + saw
		case c.Read != "":
			saw = c.Read
		}
		lines = append(lines, strings.TrimRight(fmt.Sprintf("ok       %-20s  %s", c.Name, word(saw)), " "))
	}
	return lines
}
