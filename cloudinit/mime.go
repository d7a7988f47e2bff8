package cloudinit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// part is one part of a MIME multipart message: headers in the order written, and the body as written (already
// in its Content-Transfer-Encoding).
type part struct {
	header [][2]string
	body   []byte
}

// textPart makes a part of the given content type. Plain ASCII text is sent as is (7bit); anything else in
// base64. Python's email parser, which cloud-init uses, mangles non-ASCII text in a 7bit or 8bit part that it
// reads from a str (Message.get_payload(decode=True) falls back to raw-unicode-escape), so base64 is the only
// safe choice for other bytes.
func textPart(contentType string, content []byte, extra ...[2]string) part {
	p := part{header: [][2]string{{"Content-Type", contentType + `; charset="utf-8"`}, {"MIME-Version", "1.0"}}}
	if isPlainASCII(content) {
		p.header = append(p.header, [2]string{"Content-Transfer-Encoding", "7bit"})
		p.body = content
	} else {
		p.header = append(p.header, [2]string{"Content-Transfer-Encoding", "base64"})
		p.body = wrap76(base64.StdEncoding.EncodeToString(content))
	}
	p.header = append(p.header, extra...)
	return p
}

// isPlainASCII reports whether b is printable ASCII, tabs and line feeds only (no CR: the parser would fold
// line endings).
func isPlainASCII(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\n' && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

func wrap76(s string) []byte {
	var b bytes.Buffer
	for len(s) > 76 {
		b.WriteString(s[:76])
		b.WriteByte('\n')
		s = s[76:]
	}
	b.WriteString(s)
	return b.Bytes()
}

// writeMIME writes parts as a multipart/mixed message, the layout of `cloud-init devel make-mime`. The
// boundary is derived from a hash of the parts, so the output is deterministic, and is checked not to occur
// in any of them.
func writeMIME(parts []part) []byte {
	h := sha256.New()
	for _, p := range parts {
		for _, kv := range p.header {
			h.Write([]byte(kv[0] + ": " + kv[1] + "\n"))
		}
		h.Write(p.body)
	}
	sum := h.Sum(nil)
	var boundary string
	for i := 0; ; i++ {
		boundary = "==harvester-" + hex.EncodeToString(sum[:12]) + "=="
		if !boundaryInParts(boundary, parts) {
			break
		}
		next := sha256.Sum256(append(sum, byte(i)))
		sum = next[:]
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n\n", boundary)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\n", boundary)
		for _, kv := range p.header {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
		b.WriteByte('\n')
		b.Write(p.body)
		b.WriteByte('\n') // the line break before a boundary belongs to the boundary (RFC 2046 §5.1.1)
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.Bytes()
}

func boundaryInParts(boundary string, parts []part) bool {
	for _, p := range parts {
		if bytes.Contains(p.body, []byte("--"+boundary)) {
			return true
		}
	}
	return false
}

// leaf is a non-multipart part of a MIME message the user sent: its headers and body exactly as received.
type leaf struct {
	header textproto.MIMEHeader
	raw    []byte
}

// limits on a user's MIME message: cloud-init walks any depth, but nothing real nests deeper.
const (
	maxMIMEDepth = 8
	maxMIMEParts = 256
)

// readMIME splits a MIME message into its leaf parts, descending into nested multiparts as cloud-init's
// Message.walk() does.
func readMIME(b []byte) ([]leaf, error) {
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(b)))
	header, err := r.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("MIME headers: %w", withoutInput(err))
	}
	body, err := io.ReadAll(r.R)
	if err != nil {
		return nil, err
	}
	var leaves []leaf
	if err := collectLeaves(header, body, 0, &leaves); err != nil {
		return nil, err
	}
	return leaves, nil
}

func collectLeaves(header textproto.MIMEHeader, body []byte, depth int, out *[]leaf) error {
	mediaType, params, err := mediaType(header)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		if len(*out) >= maxMIMEParts {
			return fmt.Errorf("more than %d MIME parts", maxMIMEParts)
		}
		*out = append(*out, leaf{header: header, raw: body})
		return nil
	}
	if depth >= maxMIMEDepth {
		return fmt.Errorf("MIME multiparts nested more than %d deep", maxMIMEDepth)
	}
	if params["boundary"] == "" {
		return errors.New("MIME: a multipart Content-Type without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextRawPart() // raw: quoted-printable parts stay as sent
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("MIME: %w", withoutInput(err))
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			return fmt.Errorf("MIME: %w", withoutInput(err))
		}
		if err := collectLeaves(p.Header, raw, depth+1, out); err != nil {
			return err
		}
	}
}

// withoutInput is err with any input it quotes left out. Go's MIME readers quote the line they fail on
// (net/textproto "malformed MIME header line: %q", mime/multipart "expecting a new Part; got line %q",
// mime/quotedprintable "invalid bytes after =: %q"), and a line of user data may hold a credential, which the
// error would carry to Rancher's UI and logs.
func withoutInput(err error) error {
	msg := err.Error()
	i := strings.IndexByte(msg, '"')
	if i < 0 {
		return err
	}
	return errors.New(strings.TrimRight(msg[:i], ": ") + " (the line is not shown: it may hold a secret)")
}

// mediaType is a part's lower-case media type; a part without one is text/plain, as for Python's email package.
func mediaType(header textproto.MIMEHeader) (string, map[string]string, error) {
	ct := header.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		return "text/plain", nil, nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", nil, fmt.Errorf("MIME: Content-Type: %w", err)
	}
	return strings.ToLower(mt), params, nil
}

// payload is a leaf's body with its Content-Transfer-Encoding undone (util.fully_decoded_payload).
func (l leaf) payload() ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(l.header.Get("Content-Transfer-Encoding"))) {
	case "base64":
		// Python's base64 decoder skips characters outside the alphabet; so does this.
		clean := bytes.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' {
				return r
			}
			return -1
		}, l.raw)
		if len(clean)%4 == 1 { // a lone trailing character carries no whole byte
			clean = clean[:len(clean)-1]
		}
		out, err := base64.RawStdEncoding.DecodeString(string(clean))
		if err != nil {
			return nil, fmt.Errorf("MIME part: base64: %w", err)
		}
		return out, nil
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(l.raw)))
		if err != nil {
			return nil, fmt.Errorf("MIME part: quoted-printable: %w", withoutInput(err))
		}
		return out, nil
	}
	return l.raw, nil
}

// passThrough is the leaf as a part of the output: its headers (sorted by name, values in order) and raw body.
func (l leaf) passThrough(extra ...[2]string) part {
	var p part
	for _, k := range yamlnode.SortedKeys(l.header) {
		for _, v := range l.header[k] {
			p.header = append(p.header, [2]string{k, v})
		}
	}
	p.header = append(p.header, extra...)
	p.body = l.raw
	return p
}

// hasHeader reports whether the leaf has a header of that name (any case).
func (l leaf) hasHeader(name string) bool { return len(l.header.Values(name)) > 0 }
