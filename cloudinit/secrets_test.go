package cloudinit

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/networkconfig"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// secret stands for a credential a user put somewhere in an input: a token pasted inline, a password in the
// wrong key, a URL with its userinfo. No error may repeat it: errors reach Rancher's UI and logs.
const secret = "s3cr3t-T0KEN-9f8e7d"

// planted replaces each S in s with the secret.
func planted(s string) string { return strings.ReplaceAll(s, "S", secret) }

// userDataWithSecrets are user data documents with the secret in every place a value can be, each broken in some
// way (or not) around it.
var userDataWithSecrets = []string{
	"S",                                // a token pasted as the whole user data
	"token: S\n",                       // a mapping without #cloud-config: valid
	"#cloud-config\nruncmd: [S\n",      // YAML broken right after the secret
	"#cloud-config\nruncmd: \"S\n",     // an unclosed quote
	"#cloud-config\nruncmd: S\n",       // a list section that is not a list
	"#cloud-config\na: S\n---\nb: S\n", // two documents
	"#cloud-config\n- S\n",             // a list at the top
	"#cloud-config\nusers: {S: S}\n",   // a users mapping whose entry is neither true, false nor a mapping
	"#cloud-config\nurl: https://user:S@example.com/\n\tx: 1\n", // a tab where YAML allows none
	"#cloud-config\na: !!binary S\n",
	"#cloud-config\na: !!int S\n",                   // values their tags cannot read
	"#cloud-config\na: [!!timestamp S, !!bool S]\n", //
	"#cloud-config\na: !!seq S\n",                   // a tag on the wrong kind of node
	"#cloud-config\n? [S]\n: S\n",                   // a list as a key
	"#cloud-config\nb: &x [S]\na: {<<: *x}\n",       // a merge key naming a list
	"#cloud-config\na: !Ref S\n",                    // a tag the loader does not know
	"## template: jinja\n#cloud-config\na: [S\n",
	"#!/bin/sh\necho S\n",
	"MIME-Version: 1.0\nS\n\n",                          // a header line without a colon
	"MIME-Version: 1.0\nContent-Type: S\n\nx",           // a media type without a slash
	"MIME-Version: 1.0\nContent-Type: text/S; S\n\nx",   // a broken parameter
	"MIME-Version: 1.0\nContent-Type: multipart/S\n\nx", // no boundary
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nX S\n\nbody\n--b--\n", // a part's header
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n\n--b\nS\n",
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\n\n#cloud-config\na: [S\n--b--\n",
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/x-shellscript\n" +
		"Content-Transfer-Encoding: quoted-printable\n\n#!/bin/sh\nS=\n=S\n--b--\n",
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n" +
		"Content-Transfer-Encoding: base64\n\nS\n--b--\n",
	"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: application/gzip\n\nS\n--b--\n",
}

// networkDataWithSecrets are network-configs with the secret as the value of every field the check reads.
var networkDataWithSecrets = []string{
	"S",
	"version: S\n",
	"network: S\n",
	"version: 1\nconfig: S\n",
	"version: 1\nconfig:\n  - type: S\n",
	"version: 1\nconfig:\n  - type: physical\n    name: [S]\n    mac_address: S\n    mtu: S\n    subnets:\n" +
		"      - type: S\n      - type: static\n        address: S\n        netmask: S\n        prefix: S\n" +
		"        gateway: S\n        dns_nameservers: [S, 1.1.1.1]\n        dns_search: [[S]]\n" +
		"        routes: [{network: S, gateway: S, metric: S}]\n",
	"version: 1\nconfig:\n  - {type: vlan, name: v, vlan_link: S, vlan_id: S}\n" +
		"  - {type: bridge, name: br, bridge_interfaces: [S], params: {bridge_stp: S}}\n" +
		"  - {type: nameserver, interface: S, address: S S}\n  - {type: route, destination: S}\n",
	"version: 2\nrenderer: [S]\nethernets:\n  eth0:\n    dhcp4: S\n    dhcp6: S\n    addresses: [S, {S: {}}]\n" +
		"    gateway4: S\n    gateway6: 10.0.0.1\n    nameservers: {addresses: [S], search: [[S]]}\n" +
		"    routes: [{to: S, via: S, metric: S}]\n    mtu: S\n    match: {macaddress: S}\n    macaddress: S\n" +
		"    set-name: [S]\n",
	"version: 2\nbonds:\n  bond0: {interfaces: [S], parameters: S}\nvlans:\n  v1: {id: S, link: S}\n" +
		"wifis:\n  wlan0: {access-points: {home: {password: S}}, dhcp4: S}\n",
	"version: 2\nethernets: S\n",
	"version: 2\nethernets:\n  eth0: S\n",
}

func gzipOf(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// No error of the decoders and renderers repeats a secret planted in their input.
func TestNoSecretInErrors(t *testing.T) {
	errs := 0
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			return
		}
		errs++
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error repeats the secret: %v", what, err)
		}
		var nerr *networkconfig.Error
		if errors.As(err, &nerr) { // Error() lists the first few problems; a caller may read them all
			for _, p := range nerr.Problems {
				if strings.Contains(p.String(), secret) {
					t.Errorf("%s: a problem repeats the secret: %s", what, p)
				}
			}
		}
	}
	for _, doc := range userDataWithSecrets {
		doc = planted(doc)
		_, err := UserData(Input{Hostname: "m", User: []byte(doc), Rancher: []byte(rancherDoc)})
		check("user data "+doc, err)
		check("user data (Check) "+doc, Check(Input{Hostname: "m", User: []byte(doc), Rancher: []byte(rancherDoc)}))
		_, err = UserData(Input{Hostname: "m", User: gzipOf(doc)})
		check("gzipped user data "+doc, err)
		check("Rancher's document "+doc, Check(Input{Hostname: "m", Rancher: []byte(doc)}))
		_, err = userdata.ReadFileOrInline(doc)
		check("ReadFileOrInline "+doc, err)
		_, err = userdata.Gunzip([]byte(doc))
		check("Gunzip "+doc, err)
	}
	check("Rancher's hostname", Check(Input{Rancher: []byte(planted("#cloud-config\nhostname: [S]\n"))}))
	check("SSH password", Check(Input{SSHPassword: planted("S\nS")}))
	check("driver files", Check(Input{WriteFiles: []File{{Path: "x", Content: secret, Owner: secret, Permissions: secret}}}))
	_, err := WriteFilesConfig([]File{{Path: "x", Content: secret, Owner: secret, Permissions: secret}})
	check("WriteFilesConfig", err)
	for _, doc := range networkDataWithSecrets {
		doc = planted(doc)
		check("network data "+doc, networkconfig.Validate([]byte(doc)))
		check("network data (CheckStatic) "+doc, networkconfig.CheckStatic([]byte(doc), "52:54:00:12:34:56"))
	}
	// The inputs above are broken: nearly every one must have made an error, or the test checks nothing.
	if min := len(userDataWithSecrets)*4 + len(networkDataWithSecrets)*2; errs < min {
		t.Fatalf("only %d errors, want at least %d", errs, min)
	}
}
