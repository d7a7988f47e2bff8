// Command uiplugin packs the built UI extension into the archive the chart's UIPlugin names in
// spec.plugin.compressedEndpoint (internal/uiplugin): `make ui-extension`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harvester/docker-machine-driver-harvester/internal/uiplugin"
)

func main() {
	dir := flag.String("dir", "", "the extension as @rancher/shell's build-pkg wrote it: ui/dist-pkg/<name>-<version>")
	name := flag.String("name", "", "the extension's name (ui/pkg/<name>/package.json)")
	version := flag.String("version", "", "the extension's version (ui/pkg/<name>/package.json)")
	out := flag.String("out", "", "the archive to write")
	flag.Parse()
	if err := run(*dir, *name, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "uiplugin:", err)
		os.Exit(1)
	}
}

func run(dir, name, version, out string) error {
	for flagName, v := range map[string]string{"-dir": dir, "-name": name, "-version": version, "-out": out} {
		if v == "" {
			return fmt.Errorf("%s is empty", flagName)
		}
	}
	var archive bytes.Buffer
	if err := uiplugin.Pack(&archive, dir, name, version); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, archive.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
