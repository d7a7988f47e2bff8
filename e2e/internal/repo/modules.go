package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Module is one module of the root module's build list, present in the Go module cache.
type Module struct {
	Path, Version string
	// Dir is the module's directory in the module cache (read-only).
	Dir string
}

// String is path@version.
func (m Module) String() string { return m.Path + "@" + m.Version }

var modules onceByKey[Module] // module path -> Module: one process asks the go command once per module

// ModuleDir returns the module path at the version the root go.mod selects (`go list -m` in the checkout, so
// bumping go.mod moves it; a replace directive is followed), downloaded into the Go module cache if it is not
// there yet (`go mod download`, which checks it against the checksum database as for any build).
//
// The download runs outside the checkout: `go mod download` in it would add go.sum lines for modules the build
// does not need (a test-only data source such as a CRD manifest), which `go mod tidy` removes again. Like a tool
// build, a download is not cut short by a deadline on ctx, only by a cancellation.
func ModuleDir(ctx context.Context, path string) (Module, error) {
	return modules.do(ctx, path, func(ctx context.Context) (Module, error) { return moduleDir(ctx, path) })
}

func moduleDir(ctx context.Context, path string) (Module, error) {
	root, err := Root()
	if err != nil {
		return Module{}, err
	}
	var listed struct {
		Path, Version string
		Replace       *struct{ Path, Version, Dir string }
	}
	if err := goJSON(ctx, root, &listed, "list", "-m", "-json", path); err != nil {
		return Module{}, fmt.Errorf("find %s in the root module's build list: %w", path, err)
	}
	mod := Module{Path: listed.Path, Version: listed.Version}
	if r := listed.Replace; r != nil {
		if r.Version == "" { // a local directory
			return Module{Path: path, Version: "(replaced)", Dir: r.Dir}, nil
		}
		mod.Path, mod.Version = r.Path, r.Version
	}
	if mod.Version == "" {
		return Module{}, fmt.Errorf("go list -m %s in %s gave no version: is it in the build list?", path, root)
	}

	neutral, err := os.MkdirTemp("", "dmdh-moddownload-")
	if err != nil {
		return Module{}, err
	}
	defer os.RemoveAll(neutral)
	var dl struct{ Dir, Error string }
	if err := goJSON(ctx, neutral, &dl, "mod", "download", "-json", mod.String()); err != nil && dl.Error == "" {
		return Module{}, fmt.Errorf("download %s: %w", mod, err)
	}
	if dl.Error != "" || dl.Dir == "" {
		return Module{}, fmt.Errorf("download %s: %s (it needs the Go module proxy when the module cache lacks it)", mod, dl.Error)
	}
	mod.Dir = dl.Dir
	return mod, nil
}

// goJSON runs `go args...` in dir and decodes its JSON output into out. go mod download reports a module's
// failure in its JSON (Error) as well as in its exit status, so the output is decoded either way.
func goJSON(ctx context.Context, dir string, out any, args ...string) error {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil && runErr == nil {
		return fmt.Errorf("go %s: decode its output: %w", strings.Join(args, " "), err)
	}
	if runErr != nil {
		return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), runErr, strings.TrimSpace(stderr.String()))
	}
	return nil
}
