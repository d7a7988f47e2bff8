package uiplugin

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
)

// Served reads a compressedEndpoint archive with the rules of Rancher's Untar (rancher/rancher
// pkg/controllers/dashboard/plugin/fscache.go): every entry's name must be local (pkg/utils/securejoin.go), a
// folder entry makes the folder and its parents, a file is opened without making its folder (os.OpenFile with
// O_CREATE), and any other entry type fails the whole cache. It returns the files as Rancher's plugin handler then
// serves them, by path under /v1/uiplugins/<name>/: "<version>/plugin/…".
func Served(r io.Reader) (map[string][]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	dirs := map[string]bool{".": true}
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if !filepath.IsLocal(hdr.Name) {
			return nil, fmt.Errorf("entry %q is not a local path: Rancher refuses it", hdr.Name)
		}
		name := path.Clean(hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			for d := name; d != "."; d = path.Dir(d) {
				dirs[d] = true
			}
		case tar.TypeReg:
			if !dirs[path.Dir(name)] {
				return nil, fmt.Errorf("file %s comes before any entry for its folder %s: Rancher's untar cannot create it", name, path.Dir(name))
			}
			body, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files[name] = body
		default:
			return nil, fmt.Errorf("entry %s has type %q: Rancher's untar takes only files and folders", name, hdr.Typeflag)
		}
	}
}
