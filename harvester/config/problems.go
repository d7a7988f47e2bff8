package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit"
	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
)

// Problem is one thing wrong with the machine's configuration, tied to the flag that carries it.
type Problem struct {
	Flag    string // flag name without dashes, e.g. harvester-disk-info; "" for the machine name
	Message string
}

// String renders the problem as users read it: --flag: message.
func (p Problem) String() string {
	if p.Flag == "" {
		return p.Message
	}
	return "--" + p.Flag + ": " + p.Message
}

// ConfigError reports every problem found in a configuration at once, so one failed run tells the user all that
// needs fixing.
type ConfigError struct {
	// Title says what was checked; "invalid machine configuration" when empty.
	Title    string
	Problems []Problem
}

func (e *ConfigError) Error() string {
	title := e.Title
	if title == "" {
		title = "invalid machine configuration"
	}
	lines := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	if len(lines) == 1 {
		return title + ": " + lines[0]
	}
	return fmt.Sprintf("%s (%d problems):\n  %s", title, len(lines), strings.Join(lines, "\n  "))
}

// Problems collects Problems; its zero value is ready to use.
type Problems struct {
	List []Problem
}

// Addf records a problem of flag (without dashes; "" for the machine name), redacting any value in it that may
// be a credential (see Redact).
func (p *Problems) Addf(flag, format string, args ...any) {
	p.List = append(p.List, Problem{Flag: flag, Message: Redact(fmt.Sprintf(format, args...))})
}

// Err returns a *ConfigError holding the problems, or nil when there are none.
func (p *Problems) Err() error { return p.ErrTitled("") }

// ErrTitled is err with a title saying what was checked.
func (p *Problems) ErrTitled(title string) error {
	if len(p.List) == 0 {
		return nil
	}
	return &ConfigError{Title: title, Problems: p.List}
}

// cloudInitFlags are the flags that carry each part of cloudinit's input. The driver's own files have no flag.
var cloudInitFlags = map[cloudinit.Part]string{
	cloudinit.PartUser:        FlagUserData,
	cloudinit.PartRancher:     FlagCloudConfig,
	cloudinit.PartSSHPassword: FlagSSHPassword,
}

// AddCloudInit files each error of package cloudinit (one, or several joined) about cfg's parts under the flag
// of the part it names; the user data's, when a Secret holds it, under --harvester-user-data-secret naming the
// Secret. An error that names no part is filed under the user data, the part users write.
func (p *Problems) AddCloudInit(cfg *Config, err error) {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, err := range errs {
		var e *cloudinit.Error
		msg, flag := err.Error(), FlagUserData
		if errors.As(err, &e) {
			msg, flag = e.Message(), cloudInitFlags[e.Part]
		}
		if ref := cfg.UserDataSecret; flag == FlagUserData && ref != nil {
			msg, flag = ref.String()+": "+msg, ref.Flag
		}
		p.List = append(p.List, Problem{Flag: flag, Message: Redact(msg)})
	}
}

// AddStaticConflict files an error of networkconfig.CheckStatic or networkconfig.AddStatic (the user's network
// data against the static address of --harvester-ip-pool) under --harvester-network-data, saying how to make
// the two go together, naming both flags. The parse (a rule) and the builders (the network data of a create)
// file it alike.
func (p *Problems) AddStaticConflict(err error) {
	var se *networkconfig.StaticError
	msg := err.Error()
	switch {
	case !errors.As(err, &se):
	case se.Conflict == networkconfig.ConflictVersion1:
		msg = fmt.Sprintf("is version 1; with --%s write it as version 2, to which the driver adds the first NIC's static address", FlagIPPool)
	case se.Conflict == networkconfig.ConflictDisabled:
		msg = fmt.Sprintf("disables networking (config: disabled), so the guest would not get --%s's address; drop one of the two", FlagIPPool)
	case se.Conflict == networkconfig.ConflictUnmatched:
		msg = fmt.Sprintf("%v: with --%s, which configures the first NIC, match each ethernets entry by macaddress (set the NIC's macAddress in --%s) so none can configure the first NIC too",
			err, FlagIPPool, FlagNetworkInfo)
	default:
		msg = fmt.Sprintf("%v (the first NIC's): your network data wins over --%s, so drop that entry or the pool", err, FlagIPPool)
	}
	p.Addf(FlagNetworkData, "%s", msg)
}

// AddLeaseConflict is AddStaticConflict for the DHCP entry of a leased address (--harvester-ip-pool-name): the
// user's network data against the first NIC's entry the driver adds.
func (p *Problems) AddLeaseConflict(err error) {
	var se *networkconfig.StaticError
	msg := err.Error()
	switch {
	case !errors.As(err, &se):
	case se.Conflict == networkconfig.ConflictVersion1:
		msg = fmt.Sprintf("is version 1; with --%s write it as version 2, to which the driver adds the first NIC's DHCP entry", FlagIPPoolName)
	case se.Conflict == networkconfig.ConflictDisabled:
		msg = fmt.Sprintf("disables networking (config: disabled), so the guest would not take --%s's lease; drop one of the two", FlagIPPoolName)
	default: // unmatched: the first NIC's MAC is derived at create, so no entry can match it
		msg = fmt.Sprintf("%v: with --%s, which configures the first NIC, match each ethernets entry by macaddress (set the NIC's macAddress in --%s) so none can configure the first NIC too",
			err, FlagIPPoolName, FlagNetworkInfo)
	}
	p.Addf(FlagNetworkData, "%s", msg)
}
