// Package config is the machine's configuration: the one table of flags (flags.go) with their environment
// variables and defaults, and the Config they parse into (config.go). ParseConfig makes it in two passes, and
// reports the problems of both at once, each naming its flag and the accepted format (problems.go):
//
//   - parse: each group of flags is read into its part of the Config by one parser (parseGroups and the group
//     constants in parse.go, the longer parsers in parse_*.go), which reads only its own flags and reports what
//     is wrong with their values as given: their format, their range, how the flags of the group go together;
//   - validate: one pass of rules across the Config's fields (the list in validate.go, the longer rules in
//     validate_*.go), each a named function that reads the Config, never a flag. A rule's problems are told after
//     its group's, so that they read in the order of the flags whichever pass found them.
//
// A flag is added as a row of the flag table, a field of the Config, its reading in its group's parser and, when it
// goes with another field, a rule in the list. What only the builders can check is checked by harvester/objects after
// config's rules (objects.ParseConfig, through Parse): the user data merged with the driver's own parts, as a create
// builds it (config reads each part only on its own), and the VM patch applied to the VM.
//
// A kubeconfig given as content is read as client-go reads it, and its context, user and cluster chosen as
// client-go chooses them, before the inline-only rule judges them (kubeconfig_content.go, inline_credential.go).
//
// It also holds the names Harvester reads on what the driver creates (keys.go) and the guest distributions'
// cloud-provider paths (guestfiles.go). It builds nothing: what goes into the guest, the user data and the files
// written there, is package objects'. It reads only the flags and the local files they name; it never contacts a
// cluster. It may import the API types, package cloudinit and its networkconfig, userdata and
// harvester/internal/lists; never harvester/objects, the client (harvester/internal/kube, harvester/connection) or
// the packages above them: harvester/ippool, harvester/guestaccount and package harvester (layers_test.go in
// package harvester enforces it).
package config
