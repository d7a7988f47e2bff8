// Package uiplugin packs a built Rancher UI extension into the archive that a UIPlugin's
// spec.plugin.compressedEndpoint names, and reads such an archive back the way Rancher does.
//
// Rancher reads the archive in rancher/rancher pkg/controllers/dashboard/plugin/fscache.go: cacheCompressedEndpoint
// untars it into management-state/uiplugin/<name>/, isCached looks for <name>/<version>/ there, and
// pkg/api/steve/catalog/plugin.go (pluginHandler) serves /v1/uiplugins/<name>/<version>/<rest> from that folder.
// The dashboard loads plugin/<name>-<version>.umd.min.js under that path (rancher/dashboard
// shell/core/extension-manager-impl.js, loadPluginAsync). So the archive holds <version>/plugin/<built files> and
// <version>/files.txt: the layout rancher/dashboard's shell/scripts/extension/publish packs for the
// compressedEndpoint, and the one an uncompressed endpoint serves (cacheEndpoint reads <endpoint>/files.txt and
// <endpoint>/plugin/package.json).
package uiplugin

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// FilesList is the archive's list of the extension's files, relative to <version>/ (fscache.go FilesTxtFilename).
const FilesList = "files.txt"

// skipped are build outputs the dashboard's publish script leaves out (`rm -f plugin/report.html`: webpack's
// bundle report, which only the developer reads).
var skipped = map[string]bool{"report.html": true}

// epoch is every entry's time: the same build packs to the same bytes.
var epoch = time.Unix(0, 0).UTC()

// MainFile is the script the dashboard loads for an extension: <name>-<version>.umd.min.js, under plugin/.
func MainFile(name, version string) string {
	return name + "-" + version + ".umd.min.js"
}

// Pack writes the gzipped tar of the extension built in dir (rancher/shell's build-pkg output,
// dist-pkg/<name>-<version>) to w. The build's package.json must name name and version: Rancher compares the
// version with spec.plugin.version (cacheEndpoint), and the dashboard builds the main file's name from both.
func Pack(w io.Writer, dir, name, version string) error {
	if err := checkBuild(dir, name, version); err != nil {
		return err
	}
	var files []string
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	// Rancher's Untar creates a file's folder only from a folder entry, so each folder comes before its files.
	for _, d := range []string{version, version + "/plugin"} {
		if err := writeDir(tw, d); err != nil {
			return err
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel := filepath.ToSlash(p[len(dir)+1:])
		entry := version + "/plugin/" + rel
		switch {
		case d.IsDir():
			return writeDir(tw, entry)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file: Rancher's untar takes only files and folders", p)
		case skipped[rel]:
			return nil
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, "plugin/"+rel)
		return writeFile(tw, entry, body)
	})
	if err != nil {
		return err
	}
	if err := writeFile(tw, version+"/"+FilesList, []byte(strings.Join(files, "\n")+"\n")); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// checkBuild refuses a build folder that is not the extension name at version.
func checkBuild(dir, name, version string) error {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return fmt.Errorf("the built extension %s: %w (build it with make ui-extension)", dir, err)
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Errorf("%s/package.json: %w", dir, err)
	}
	if pkg.Name != name || pkg.Version != version {
		return fmt.Errorf("%s/package.json is %s %s, not %s %s", dir, pkg.Name, pkg.Version, name, version)
	}
	if _, err := os.Stat(filepath.Join(dir, MainFile(name, version))); err != nil {
		return fmt.Errorf("the built extension lacks the file the dashboard loads: %w", err)
	}
	return nil
}

func writeDir(tw *tar.Writer, name string) error {
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: path.Clean(name) + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
}

func writeFile(tw *tar.Writer, name string, body []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}
