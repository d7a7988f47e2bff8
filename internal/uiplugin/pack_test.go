package uiplugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// build writes a build-pkg output folder: the package file, the main script, a chunk with its map in a folder,
// and webpack's report.
func build(t *testing.T, name, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name+"-"+version)
	for file, body := range map[string]string{
		"package.json":                             `{"name": "` + name + `", "version": "` + version + `", "main": "` + MainFile(name, version) + `"}`,
		MainFile(name, version):                    "main",
		"js/" + name + "-" + version + ".1.js":     "chunk",
		"js/" + name + "-" + version + ".1.js.map": "map",
		"report.html":                              "report",
	} {
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPackIsWhatRancherServes(t *testing.T) {
	dir := build(t, "hcivm", "1.2.3")
	var archive bytes.Buffer
	if err := Pack(&archive, dir, "hcivm", "1.2.3"); err != nil {
		t.Fatal(err)
	}
	served, err := Served(bytes.NewReader(archive.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// The dashboard's request, /v1/uiplugins/hcivm/1.2.3/plugin/hcivm-1.2.3.umd.min.js, finds the main script.
	if got := string(served["1.2.3/plugin/"+MainFile("hcivm", "1.2.3")]); got != "main" {
		t.Errorf("main script served as %q; served files: %v", got, keys(served))
	}
	if _, ok := served["1.2.3/plugin/report.html"]; ok {
		t.Error("webpack's report is packed")
	}
	want := "plugin/hcivm-1.2.3.umd.min.js\nplugin/js/hcivm-1.2.3.1.js\nplugin/js/hcivm-1.2.3.1.js.map\nplugin/package.json\n"
	list := string(served["1.2.3/"+FilesList])
	if list != want {
		t.Errorf("files.txt:\n%s\nwant:\n%s", list, want)
	}
	// Every listed file is in the archive, and passes Rancher's check of files.txt entries (fscache.go fileNameRegex).
	for _, f := range strings.Fields(list) {
		if regexp.MustCompile(`(^[/\\.])|\.\.`).MatchString(f) {
			t.Errorf("Rancher refuses the files.txt entry %s", f)
		}
		if _, ok := served["1.2.3/"+f]; !ok {
			t.Errorf("files.txt lists %s, which the archive lacks", f)
		}
	}
	if len(served) != 5 {
		t.Errorf("served files %v", keys(served))
	}

	var again bytes.Buffer
	if err := Pack(&again, dir, "hcivm", "1.2.3"); err != nil || !bytes.Equal(again.Bytes(), archive.Bytes()) {
		t.Errorf("a second pack of the same build differs (err %v)", err)
	}
}

func TestPackRefusesAnotherBuild(t *testing.T) {
	dir := build(t, "hcivm", "1.2.3")
	for _, c := range []struct{ name, version string }{{"hcivm", "1.2.4"}, {"other", "1.2.3"}} {
		if err := Pack(&bytes.Buffer{}, dir, c.name, c.version); err == nil || !strings.Contains(err.Error(), "package.json is hcivm 1.2.3") {
			t.Errorf("packing hcivm 1.2.3 as %s %s: %v", c.name, c.version, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, MainFile("hcivm", "1.2.3"))); err != nil {
		t.Fatal(err)
	}
	if err := Pack(&bytes.Buffer{}, dir, "hcivm", "1.2.3"); err == nil || !strings.Contains(err.Error(), "lacks the file the dashboard loads") {
		t.Errorf("a build without its main script: %v", err)
	}
}

// An archive packed as `tar -C dist-pkg/<name>-<version> .` (no version folder) is cached by Rancher under the
// wrong path; one whose files come before their folder, or with a link, fails Rancher's untar.
func TestServedReadsAsRancherDoes(t *testing.T) {
	for name, c := range map[string]struct {
		entries []tar.Header
		wantErr string
	}{
		"file before its folder": {[]tar.Header{{Typeflag: tar.TypeReg, Name: "1.0.0/plugin/a.js"}}, "before any entry for its folder"},
		"symlink":                {[]tar.Header{{Typeflag: tar.TypeDir, Name: "1.0.0/"}, {Typeflag: tar.TypeSymlink, Name: "1.0.0/a", Linkname: "/etc"}}, "only files and folders"},
		"escaping path":          {[]tar.Header{{Typeflag: tar.TypeReg, Name: "../a.js"}}, "not a local path"},
		"flat archive":           {[]tar.Header{{Typeflag: tar.TypeDir, Name: "./"}, {Typeflag: tar.TypeReg, Name: "./hcivm-1.0.0.umd.min.js"}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			for _, h := range c.entries {
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
			}
			tw.Close()
			zw.Close()
			served, err := Served(&buf)
			if c.wantErr == "" {
				if _, ok := served["1.0.0/plugin/hcivm-1.0.0.umd.min.js"]; err != nil || ok || len(served) != 1 {
					t.Errorf("served %v, %v", keys(served), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v, want %q", err, c.wantErr)
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
