// Package userdata decodes what users and rancher-machine hand the driver as cloud-init input: flag values that
// may be base64 or literal (DecodeBase64OrPlain, with IsUserData as a format check), the
// document behind --harvester-cloud-config (ReadCloudConfigFlag), and the facts about raw user data that
// cloud-init itself decides by looking at the bytes: its content type by first line (ContentType), whether it
// is a MIME message (IsMIME) and gzip (IsGzip, Gunzip). Nothing here renders user data; package cloudinit does.
package userdata
