package cloudinit

// File is a file the driver asks cloud-init to write (for example the guest cloud provider's kubeconfig). It is
// rendered with `encoding: b64`, so any bytes survive.
type File struct {
	Path        string // absolute path in the guest
	Content     string // the file's bytes
	Owner       string // "user:group"; empty leaves cloud-init's default (root:root)
	Permissions string // octal, e.g. "0600"; empty leaves cloud-init's default (0644)
}

// Input is everything that goes into one machine's user data.
type Input struct {
	Hostname          string   // per-node hostname: the machine name (driver-owned)
	SSHUser           string   // user the keys and the password are for; "" means root
	SSHAuthorizedKeys []string // public keys: the driver-generated key, the Harvester key pair's key
	SSHPassword       string   // optional; only rendered when non-empty
	InstallGuestAgent bool     // inject qemu-guest-agent (default true in the driver; false = opt-out)
	WriteFiles        []File   // driver-owned files
	// User is the user's --harvester-user-data, already base64-decoded: any format cloud-init reads
	// (cloud-config, jinja template, #! script, MIME multipart, #include, #cloud-boothook, gzip, …).
	User []byte
	// Rancher is the document behind --harvester-cloud-config: the cloud-config rancher-machine writes with
	// Rancher's install script, or empty.
	Rancher []byte
}
