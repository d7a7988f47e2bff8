// Command nodedriver writes the NodeDriver manifests of a release for the second driver name, one per
// architecture, with each archive's checksum from the release's checksum file: `make nodedriver-manifests`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/nodedriver"
	"github.com/harvester/docker-machine-driver-harvester/internal/release"
)

func main() {
	name := flag.String("name", identity.Release, "the second driver name")
	version := flag.String("version", "", "the release tag the archives are published under, e.g. v1.1.0")
	sumsPath := flag.String("checksums", "dist/sha256sums.txt", "the release's checksum file")
	base := flag.String("url-base", release.DownloadBase, "where the release's files are downloaded from: <url-base>/<version>/<archive>")
	out := flag.String("out", "dist", "directory the manifests are written to")
	flag.Parse()
	if err := run(*name, *version, *sumsPath, *base, *out); err != nil {
		fmt.Fprintln(os.Stderr, "nodedriver:", err)
		os.Exit(1)
	}
}

func run(name, version, sumsPath, base, out string) error {
	if version == "" {
		return fmt.Errorf("-version is empty: give the release tag the archives are published under")
	}
	f, err := os.Open(sumsPath)
	if err != nil {
		// The manifests point at the published archives, so their checksums must be the published ones: a snapshot
		// built here (make release-snapshot) has archives of its own, whose sums Rancher would refuse.
		return fmt.Errorf("-checksums: %v: download the release's checksum file, %s/%s/sha256sums.txt, to %s "+
			"(the checksums of a release built here, make release-snapshot, are of its own archives and cannot match the published ones)",
			err, base, version, sumsPath)
	}
	defer f.Close()
	sums, err := nodedriver.ReadChecksums(f)
	if err != nil {
		return fmt.Errorf("-checksums %s: %v", sumsPath, err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		archive := nodedriver.Archive(name, arch)
		sum, ok := sums[archive]
		if !ok {
			return fmt.Errorf("-checksums %s lists no %s: does .goreleaser.yaml build the %s archives?", sumsPath, archive, name)
		}
		manifest, err := nodedriver.Manifest(nodedriver.Spec{Name: name, URL: base + "/" + version + "/" + archive,
			Checksum: sum, Version: version, Arch: arch})
		if err != nil {
			return err
		}
		path := filepath.Join(out, "nodedriver-"+name+"-"+arch+".yaml")
		if err := os.WriteFile(path, manifest, 0o644); err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}
