// Package userdata decodes what users and rancher-machine hand the driver as cloud-init input: flag values that
// may be base64 or literal, and the file rancher-machine writes for Rancher's install script.
package userdata
