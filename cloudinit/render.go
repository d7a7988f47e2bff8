package cloudinit

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// UserData renders the user data the guest boots with: a #cloud-config document (with a leading
// `## template: jinja` line when the user's was a template), or a MIME multipart message when the user's part
// is not cloud-config. Every error is an *Error naming the part of in at fault. The rules are in the package
// documentation.
func UserData(in Input) ([]byte, error) {
	user, body, err := build(in)
	if err != nil {
		return nil, err
	}
	out := compose(user, body)
	if err := checkSize(in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkSize refuses user data over userdata.MaxSize, the most the cloud-init Secret holds. The error is filed
// under the user's user data, or Rancher's document when there is no user data, or the driver's files.
func checkSize(in Input, out []byte) error {
	if len(out) <= userdata.MaxSize {
		return nil
	}
	part := PartUser
	switch {
	case len(bytes.TrimSpace(in.User)) > 0:
	case len(bytes.TrimSpace(in.Rancher)) > 0:
		part = PartRancher
	default:
		part = PartWriteFiles
	}
	return inPart(part, userdata.NewBudget(userdata.MaxSize).Spend(int64(len(out)),
		"together with the other parts renders to"))
}

// Check reports what UserData would refuse in in, without the output: each part is read on its own first, so
// that a broken user data, a broken Rancher document and a bad password are all reported (errors.Join of
// *Error); when they read, the rules between them (lists, anchors, writing the merge back) are checked too.
func Check(in Input) error {
	if err := checkParts(in.User, inputHasJinja(in), in.Rancher, in.SSHPassword, in.WriteFiles); err != nil {
		return err
	}
	user, body, err := build(in)
	if err != nil {
		return err
	}
	return checkSize(in, compose(user, body))
}

// CheckParts reports what UserData would refuse in the parts a user writes, each read on its own, without the
// driver's parts (errors.Join of *Error, as Check's): the user data, Rancher's document with its hostname, and
// the SSH password. A jinja template in the user data is read as the part of its own UserData sends it as when
// the values beside it hold jinja delimiters: whether it merges, and the rules between the parts, are Check's.
func CheckParts(user, rancher []byte, sshPassword string) error {
	return checkParts(user, true, rancher, sshPassword, nil)
}

// checkParts reads each part on its own, the driver's files too (errors.Join of each part's error);
// templateApart is readUser's forceJinjaPart.
func checkParts(user []byte, templateApart bool, rancher []byte, sshPassword string, files []File) error {
	var errs []error
	if _, err := readUser(user, templateApart); err != nil {
		errs = append(errs, err)
	}
	if doc, err := readRancher(rancher); err != nil {
		errs = append(errs, err)
	} else if _, _, _, err := placeHostname("", doc, nil); err != nil {
		errs = append(errs, err) // Rancher's hostname
	}
	if err := checkPassword(sshPassword); err != nil {
		errs = append(errs, err)
	}
	if _, err := writeFiles(files); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// build reads and merges the parts of in into the merged cloud-config's body, and the user's parts it goes
// out with.
func build(in Input) (*userParts, []byte, error) {
	user, err := readUser(in.User, inputHasJinja(in))
	if err != nil {
		return nil, nil, err
	}
	rancher, err := readRancher(in.Rancher)
	if err != nil {
		return nil, nil, err
	}
	for i, d := range user.configs {
		if user.configs[i], err = flattenTop(d, PartUser); err != nil {
			return nil, nil, err
		}
	}
	id := identity{pin: user.opaqueTemplate}
	if id.hostname, id.inDriver, id.note, err = placeHostname(in.Hostname, rancher, user.configs); err != nil {
		return nil, nil, err
	}
	var others []*yaml.Node
	if rancher != nil {
		others = append(others, rancher)
	}
	driver, err := driverDoc(in, id, user.configs, others)
	if err != nil {
		return nil, nil, err
	}
	docs, srcs := sources(driver, user.configs, rancher)
	merged, err := mergeDocs(docs, srcs)
	if err != nil {
		return nil, nil, err
	}
	if merged, err = fixAnchors(merged); err != nil {
		return nil, nil, inPart(PartUser, err)
	}
	body, err := encode(merged)
	if err != nil {
		// Only the user's YAML can do this (the driver writes plain strings, lists and mappings).
		return nil, nil, inPart(PartUser, fmt.Errorf("uses YAML that cannot be written back unchanged (an explicit tag "+
			"such as !!set?): %w", err))
	}
	return user, body, nil
}

// sources lines the documents up in concatenation order (driver, user documents, Rancher) with their key order
// (user, driver, Rancher) and scalar precedence (a later user document, an earlier one, Rancher, driver).
func sources(driver *yaml.Node, user []*yaml.Node, rancher *yaml.Node) ([]*yaml.Node, []*source) {
	k := len(user)
	docs := []*yaml.Node{driver}
	srcs := []*source{{part: partDriver, order: k, rank: k + 1}}
	for i, d := range user {
		docs = append(docs, d)
		srcs = append(srcs, &source{part: PartUser, order: i, rank: k - 1 - i})
	}
	if rancher != nil {
		docs = append(docs, rancher)
		srcs = append(srcs, &source{part: PartRancher, order: k + 1, rank: k})
	}
	return docs, srcs
}

// readRancher parses the document behind --harvester-cloud-config: rancher-machine always writes a
// #cloud-config there (commands/create.go writeCloudConfig adds the line; a user's #! script is folded into
// install.sh). A YAML mapping without the line is read too, as the reference driver read it. Empty is allowed.
func readRancher(b []byte) (*yaml.Node, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	body, ok := splitHeader(b, headerCloudConfig)
	switch kind := ContentType(b); {
	case kind == TypeCloudConfig && ok:
	case kind == "":
		body = b
	default:
		return nil, inPart(PartRancher, fmt.Errorf("not a #cloud-config document but %s (rancher-machine writes a "+
			"cloud-config here; give your own user data as the user data instead)", kind))
	}
	doc, err := parseConfig(body)
	if err == nil {
		err = checkConfig(doc)
	}
	if err != nil {
		return nil, configError(PartRancher, "", err)
	}
	return flattenTop(doc, PartRancher)
}

// flattenTop returns a copy of doc whose top-level mapping has its merge keys (<<) expanded, so the top-level
// rules see every key, and which may be changed without touching doc.
func flattenTop(doc *yaml.Node, part Part) (*yaml.Node, error) {
	top := doc.Content[0]
	ps, err := yamlnode.Pairs(top, yamlnode.NewWalker())
	if err != nil {
		return nil, inPart(part, err)
	}
	flat := *top
	flat.Anchor = ""
	flat.Content = nil
	for _, p := range ps {
		flat.Content = append(flat.Content, p[0], p[1])
	}
	out := *doc
	out.Content = []*yaml.Node{&flat}
	return &out, nil
}

// compose writes the final user data around the merged cloud-config body.
func compose(u *userParts, body []byte) []byte {
	doc := append([]byte(headerCloudConfig+"\n"), body...)
	if u.jinja {
		doc = append([]byte(headerJinja+"\n"), doc...)
	}
	if len(u.parts) == 0 {
		if !IsMIME(doc) {
			return doc
		}
		// cloud-init reads any user data with "mime-version:" in its first 4096 bytes as a MIME message
		// (user_data.convert_string), which would garble this cloud-config: send it as a MIME part instead.
		typ := TypeCloudConfig
		if u.jinja {
			typ = TypeJinja
		}
		return writeMIME([]part{textPart(typ, doc)})
	}
	return writeMIME(append([]part{textPart(TypeCloudConfig, doc)}, u.parts...))
}
