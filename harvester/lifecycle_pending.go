package harvester

import (
	"errors"

	"github.com/rancher/machine/libmachine/state"
)

// errLifecyclePending is returned by the lifecycle methods until they talk to Harvester (issue 4).
var errLifecyclePending = errors.New("the harvester driver cannot manage machines on a cluster yet in this build; use the render subcommand to see what it would create")

func (d *Driver) PreCreateCheck() error          { return errLifecyclePending }
func (d *Driver) Create() error                  { return errLifecyclePending }
func (d *Driver) GetState() (state.State, error) { return state.None, errLifecyclePending }
func (d *Driver) Start() error                   { return errLifecyclePending }
func (d *Driver) Stop() error                    { return errLifecyclePending }
func (d *Driver) Restart() error                 { return errLifecyclePending }
func (d *Driver) Kill() error                    { return errLifecyclePending }
func (d *Driver) Remove() error                  { return errLifecyclePending }
