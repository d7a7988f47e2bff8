// Package userdata decodes the user data and the other documents users and rancher-machine hand the driver,
// before anything reads them as cloud-init: a value that may be base64 or literal (DecodeBase64OrPlain, told by a
// format check the caller passes), gzip (IsGzip, Gunzip, a Budget shared by every inflation of one input), a value
// that names a file or is the content itself (ReadFileOrInline). Every document is bounded, by MaxSize unless the
// caller gives a smaller limit; reading a file within a limit and wording a size is package internal/bounded's. It
// knows no flags and no cloud-init: errors say what was wrong with the value, and the caller says which input it
// was. Package cloudinit reads and renders the decoded documents.
package userdata
