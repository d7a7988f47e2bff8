// Package objects makes every object the driver sends to Harvester from a Config and the facts only the cluster
// knows (Facts): the VirtualMachine with its volume claims, affinity and labels (vm.go, volumes.go, affinity.go,
// labels.go), the cloud-init Secret (secret.go) and the user data in it with everything that goes into it — the
// driver's parts and the guest cloud provider's files (userdata.go) — the plan of the static addresses, their
// network data and allocations (address.go), and the manifests `render` prints (render.go). Golden files under
// testdata pin them; every golden VM passes KubeVirt's admission and Harvester's validator.
//
// A machine's objects are built once (machine.go): ParseConfig parses the flags and builds the Machine with
// placeholders for what only the cluster knows, refusing with the flags' problems what only a builder can check
// (the user data merged with the driver's parts, the VM patch); the pre-flight completes it with what it read
// (Machine.Complete) and judges it; the create sends it (Machine.Objects) with what only the create learns. A
// problem a builder finds later is filed under its flag the same way (config.Problems).
//
// Its functions are pure: no client, no clock, no randomness (what a create draws, like the claim suffix, comes in
// as an argument, Draw). It may import harvester/config, package cloudinit and the API types; never the client
// (harvester/internal/kube, harvester/connection) or the packages that use it: harvester/ippool, which allocates
// what address.go plans, harvester/guestaccount, harvester/preflight and package harvester (layers_test.go in
// package harvester enforces it).
package objects
