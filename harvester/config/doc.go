// Package config is the machine's configuration: the one table of flags (flags.go) with their environment
// variables and defaults, the Config they parse into, and the checks that make it valid — every problem at once,
// each naming its flag and the accepted format (problems.go). It also holds the names Harvester reads on what the
// driver creates (keys.go) and the guest distributions' cloud-provider paths (guestfiles.go).
//
// It reads only the flags and the local files they name; it never contacts a cluster. It may import the API
// types, package cloudinit and its networkconfig, userdata and harvester/internal/lists; never harvester/objects,
// the client (harvester/internal/kube, harvester/connection) or the packages above them: harvester/ippool,
// harvester/guestaccount and package harvester (layers_test.go in package harvester enforces it).
package config
