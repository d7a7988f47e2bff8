package cloudinit

import (
	"bytes"
	"sort"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// Content types cloud-init gives user data by its first line (cloudinit/handlers/__init__.py INCLUSION_TYPES_MAP).
const (
	TypeCloudConfig        = "text/cloud-config"
	TypeCloudConfigArchive = "text/cloud-config-archive"
	TypeCloudConfigJSONP   = "text/cloud-config-jsonp"
	TypeJinja              = "text/jinja2"
	TypeShellScript        = "text/x-shellscript"
	TypeInclude            = "text/x-include-url"
	TypeIncludeOnce        = "text/x-include-once-url"
	TypePartHandler        = "text/part-handler"
	TypeBoothook           = "text/cloud-boothook"
)

// prefixTypes is cloud-init 22.4's INCLUSION_TYPES_MAP (cloudinit/handlers/__init__.py), sorted longest first
// as its INCLUSION_SRCH is, so "#cloud-config-archive" is not taken for "#cloud-config".
var prefixTypes = func() [][2]string {
	m := map[string]string{
		"#include":                        TypeInclude,
		"#include-once":                   TypeIncludeOnce,
		"#!":                              TypeShellScript,
		"#cloud-config":                   TypeCloudConfig,
		"#part-handler":                   TypePartHandler,
		"#cloud-boothook":                 TypeBoothook,
		"#cloud-config-archive":           TypeCloudConfigArchive,
		"#cloud-config-jsonp":             TypeCloudConfigJSONP,
		"## template: jinja":              TypeJinja,
		"text/x-shellscript-per-boot":     "text/x-shellscript-per-boot",
		"text/x-shellscript-per-instance": "text/x-shellscript-per-instance",
		"text/x-shellscript-per-once":     "text/x-shellscript-per-once",
	}
	out := make([][2]string, 0, len(m))
	for p, t := range m {
		out = append(out, [2]string{p, t})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i][0]) != len(out[j][0]) {
			return len(out[i][0]) > len(out[j][0])
		}
		return out[i][0] < out[j][0]
	})
	return out
}()

// ContentType returns the content type cloud-init gives b by how it starts, or "" when it knows no such start.
// It follows handlers.type_from_starts_with: leading white space is skipped and case is ignored, so
// "  #Cloud-Config" is a cloud-config. A leading UTF-8 byte order mark is skipped too (cloud-init would not,
// and would then ignore the whole document).
func ContentType(b []byte) string {
	head := b
	if len(head) > 4096 {
		head = head[:4096]
	}
	s := strings.ToLower(strings.TrimLeft(strings.TrimPrefix(string(head), "\ufeff"), " \t\r\n\v\f"))
	for _, pt := range prefixTypes {
		if strings.HasPrefix(s, pt[0]) {
			return pt[1]
		}
	}
	return ""
}

// IsMIME reports whether cloud-init reads b as a MIME message: like user_data.convert_string, whether
// "mime-version:" occurs (in any case) in its first 4096 bytes.
func IsMIME(b []byte) bool {
	if len(b) > 4096 {
		b = b[:4096]
	}
	return bytes.Contains(bytes.ToLower(b), []byte("mime-version:"))
}

// IsUserData reports whether b is user data cloud-init reads: a document starting the way one of its handlers
// expects (#cloud-config, ## template: jinja, #!, #include, #cloud-boothook, #part-handler, …), a MIME message,
// gzip-compressed data, or a YAML mapping without the #cloud-config line (the reference driver accepted those
// and added the line). It is the `valid` check userdata.DecodeBase64OrPlain needs to tell base64 user data
// from a literal one.
func IsUserData(b []byte) bool {
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return false
	case userdata.IsGzip(b), IsMIME(b), ContentType(b) != "":
		return true
	}
	return yamlnode.IsMapping(b)
}
