package cloudinit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// userParts is the user's user data taken apart: cloud-config documents to merge with the driver's and
// Rancher's, and parts to send after the merged cloud-config in a MIME message.
type userParts struct {
	configs []*yaml.Node // parsed cloud-config documents, in order
	jinja   bool         // configs[0] is a jinja template's: the output keeps its `## template: jinja` line
	parts   []part       // everything cloud-config cannot be merged with, passed through in order
	// opaqueTemplate is set when a part passed through is a jinja template, whose keys the driver cannot see.
	opaqueTemplate bool
}

// retypedTypes are the part types cloud-init re-types by their first line (user_data.py TYPE_NEEDED plus
// text/x-shellscript, which _process_msg re-checks).
var retypedTypes = map[string]bool{"text/plain": true, "text/x-not-multipart": true, TypeShellScript: true}

// gzipTypes are the content types whose payload cloud-init inflates (user_data.py DECOMP_TYPES).
var gzipTypes = map[string]bool{
	"application/gzip": true, "application/gzip-compressed": true, "application/gzipped": true,
	"application/x-compress": true, "application/x-compressed": true, "application/x-gunzip": true,
	"application/x-gzip": true, "application/x-gzip-compressed": true,
}

// readUser takes the user's user data apart. forceJinjaPart sends a jinja template as a part of its own even
// when it could be merged (the driver's own values contain jinja delimiters).
//
// The user data and everything inflated from it (the whole of it when it is gzip, and each gzip part of a MIME
// message) draw on one budget of userdata.MaxSize bytes: a small input of many gzip parts would otherwise stand
// for any number of megabytes, all held in memory.
func readUser(b []byte, forceJinjaPart bool) (*userParts, error) {
	u := &userParts{}
	if len(bytes.TrimSpace(b)) == 0 {
		return u, nil
	}
	budget := userdata.NewBudget(userdata.MaxSize)
	if userdata.IsGzip(b) {
		inflated, err := budget.Gunzip(b)
		if err != nil {
			return nil, inPart(PartUser, err)
		}
		b = inflated
	} else if err := budget.Spend(int64(len(b)), "it is"); err != nil {
		return nil, inPart(PartUser, err)
	}
	kind := ContentType(b)
	if IsMIME(b) {
		err := u.readMIME(b, budget)
		if err == nil {
			return u, nil
		}
		if kind == "" {
			return nil, inPart(PartUser, err)
		}
		// A document that only mentions "MIME-Version:" (say, a script that writes a mail) is taken by its
		// first line. cloud-init would try it as MIME; the output wraps it in a proper MIME message instead.
		u = &userParts{}
	}
	switch kind {
	case TypeCloudConfig:
		rest, _ := splitHeader(b, headerCloudConfig)
		return u, u.addConfig(rest)
	case TypeJinja:
		return u, u.addJinja(b, forceJinjaPart)
	case "":
		if IsUserData(b) { // a YAML mapping without the #cloud-config line, as the reference accepted
			return u, u.addConfig(b)
		}
		return nil, inPart(PartUser, errors.New("not a format cloud-init reads: start it with #cloud-config (YAML), "+
			"#! (a script) or ## template: jinja, or send a MIME multipart message"))
	}
	u.parts = append(u.parts, textPart(kind, b))
	return u, nil
}

// addConfig parses a cloud-config body and adds it to the documents to merge.
func (u *userParts) addConfig(body []byte) error {
	doc, err := parseConfig(body)
	if err == nil {
		err = checkConfig(doc)
	}
	if err != nil {
		return configError(PartUser, "", err)
	}
	u.configs = append(u.configs, doc)
	return nil
}

// addJinja adds a `## template: jinja` document. It is merged like a cloud-config (keeping its first line) when
// the template renders a cloud-config, parses as YAML, and has all its jinja inside scalars or comments;
// otherwise it is sent as a text/jinja2 part of its own, with a Merge-Type header (see mergeHeader). A
// template without any jinja that does not parse is an error: rendering cannot fix it.
func (u *userParts) addJinja(b []byte, forcePart bool) error {
	rest, _ := splitHeader(b, headerJinja)
	body, isConfig := splitHeader(rest, headerCloudConfig)
	if isConfig && !forcePart {
		doc, err := parseConfig(body)
		switch {
		case err == nil && jinjaInScalars(body, doc):
			if err := checkConfig(doc); err != nil {
				return configError(PartUser, "", err)
			}
			u.configs, u.jinja = append(u.configs, doc), true
			return nil
		case err != nil && !hasJinja(string(body)):
			return inPart(PartUser, err)
		}
	}
	u.parts = append(u.parts, textPart(TypeJinja, b, [2]string{"Merge-Type", mergeHeader}))
	u.opaqueTemplate = true
	return nil
}

// readMIME reads a MIME message: text/cloud-config parts (by content type, or by first line for the types
// cloud-init re-types, after inflating gzip types, which draw on budget) are merged; every other part is passed
// through unchanged, except that a jinja part without a merge header gets one.
func (u *userParts) readMIME(b []byte, budget *userdata.Budget) error {
	leaves, err := readMIME(b)
	if err != nil {
		return err
	}
	for i, l := range leaves {
		typ, payload, err := l.effectiveType(budget)
		if err != nil {
			return at(PartUser, fmt.Sprintf("MIME part %d", i+1), err)
		}
		switch {
		case typ == TypeCloudConfig:
			body := payload
			if rest, ok := splitHeader(payload, headerCloudConfig); ok {
				body = rest
			}
			doc, err := parseConfig(body)
			if err == nil {
				err = checkConfig(doc)
			}
			if err != nil {
				return configError(PartUser, fmt.Sprintf("MIME part %d (text/cloud-config)", i+1), err)
			}
			u.configs = append(u.configs, doc)
		case typ == TypeJinja && !l.hasHeader("Merge-Type") && !l.hasHeader("X-Merge-Type"):
			u.parts = append(u.parts, l.passThrough([2]string{"Merge-Type", mergeHeader}))
			u.opaqueTemplate = true
		case typ == TypeJinja:
			u.parts = append(u.parts, l.passThrough())
			u.opaqueTemplate = true
		default:
			u.parts = append(u.parts, l.passThrough())
		}
	}
	return nil
}

// effectiveType is the content type cloud-init acts on for a part (user_data.UserDataProcessor._process_msg):
// gzip types are inflated (drawing on budget) and then typed by first line, as are text/plain,
// text/x-not-multipart and text/x-shellscript. The payload is returned decoded.
func (l leaf) effectiveType(budget *userdata.Budget) (string, []byte, error) {
	typ, _, err := mediaType(l.header)
	if err != nil {
		return "", nil, err
	}
	payload, err := l.payload()
	if err != nil {
		return "", nil, err
	}
	if gzipTypes[typ] {
		if payload, err = budget.Gunzip(payload); err != nil {
			return "", nil, err
		}
		typ = "text/plain"
	}
	if retypedTypes[typ] {
		if t := ContentType(payload); t != "" {
			typ = t
		}
	}
	return strings.ToLower(typ), payload, nil
}
