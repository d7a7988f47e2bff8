// Package userdata decodes what users and rancher-machine hand the driver, before anything reads it as
// cloud-init: a value that may be base64 or literal (DecodeBase64OrPlain, told by a format check the caller
// passes), gzip (IsGzip, Gunzip), a value that names a file or is the content itself (ReadFileOrInline), and a
// file a flag names (ReadRegularFile: regular files only, checked without blocking, with a size limit). Every
// read is bounded, by MaxSize unless the caller gives a smaller limit. It knows no flags and no cloud-init:
// errors say what was wrong with the value, and the caller says which input it was. Package cloudinit reads and
// renders the decoded documents.
package userdata
