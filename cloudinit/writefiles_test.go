package cloudinit

import (
	"encoding/base64"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestWriteFilesConfig(t *testing.T) {
	content := "apiVersion: v1\nkind: Config\n# any bytes: \x00\xff\n"
	out, err := WriteFilesConfig([]File{
		{Path: "/etc/kubernetes/cloud-config", Content: content, Owner: "root:root", Permissions: "0600"},
		{Path: "/var/lib/rancher/rke2/etc/config-files/cloud-provider-config", Content: content, Owner: "root:root", Permissions: "0600"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "#cloud-config\n") {
		t.Fatalf("no cloud-config header:\n%s", out)
	}
	var doc struct {
		WriteFiles []struct{ Path, Encoding, Content, Owner, Permissions string } `yaml:"write_files"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.WriteFiles) != 2 {
		t.Fatalf("write_files: %+v", doc.WriteFiles)
	}
	for _, f := range doc.WriteFiles {
		got, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil || string(got) != content || f.Encoding != "b64" || f.Owner != "root:root" || f.Permissions != "0600" {
			t.Errorf("%s: %+v (%v)", f.Path, f, err)
		}
	}
	schemaCheck(t, "write-files-config", out)
	if _, err := WriteFilesConfig([]File{{Path: "relative"}}); err == nil {
		t.Error("a relative path is accepted")
	}
}
