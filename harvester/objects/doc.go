// Package objects makes every object the driver sends to Harvester from a Config and the facts only the cluster
// knows (Facts): the VirtualMachine with its volume claims, affinity and labels (vm.go, volumes.go, affinity.go,
// labels.go), the cloud-init Secret (secret.go) and the user data in it with everything that goes into it — the
// driver's parts and the guest cloud provider's files (userdata.go) — the static address's network data and
// allocation (address.go), and the manifests `render` prints (render.go). Golden files under testdata pin them;
// every golden VM passes KubeVirt's admission and Harvester's validator.
//
// What only a builder can check takes part in config's validation pass (rules.go): callers parse with
// config.ParseConfig(name, opts, objects.Rules...), so that a user data a create could not build is refused with
// the other problems. A problem a builder finds later, with the facts of the create, is filed under its flag the
// same way (config.Problems).
//
// Its functions are pure: no client, no clock, no randomness (what a create draws, like the claim suffix, comes in
// as an argument). It may import harvester/config, package cloudinit and the API types; never the client
// (harvester/internal/kube, harvester/connection) or the packages that use it: harvester/ippool, which allocates
// what address.go describes, harvester/guestaccount and package harvester (layers_test.go in package harvester
// enforces it).
package objects
