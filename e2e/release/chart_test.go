package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/nodedriver"
	"github.com/harvester/docker-machine-driver-harvester/internal/release"
	"github.com/harvester/docker-machine-driver-harvester/internal/uiplugin"
)

// pluginNamespace is the one namespace whose UIPlugins Rancher reads (rancher/rancher pkg/namespace
// UIPluginNamespace, indexed by pkg/controllers/dashboard/plugin/controller.go).
const pluginNamespace = release.Namespace

// releaseMeta is what goreleaser's metadata.json says of the release it built.
type releaseMeta struct{ Tag, Version string }

// renderedUIPlugin is what Rancher reads from the chart's UIPlugin.
type renderedUIPlugin struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	Spec     struct {
		Plugin struct {
			Name, Version, Endpoint, CompressedEndpoint string
			NoCache, NoAuth                             bool
			Metadata                                    map[string]string
		}
	}
}

// extensionPackage is what the extension's package.json says of its name, version and Rancher annotations.
type extensionPackage struct {
	Name, Version string
	Rancher       struct{ Annotations map[string]string }
}

// chartMetadata is what `helm show chart` prints of the packaged Chart.yaml.
type chartMetadata struct {
	Name, Version, AppVersion, Icon string
	Annotations                     map[string]string
}

// versionAnnotations are the annotations by which Rancher tells where an extension and its chart may be used
// (rancher/dashboard shell/config/uiplugins.js: shouldNotLoadPlugin reads them from the UIPlugin's metadata,
// isSupportedChartVersion from the chart's; rancher/rancher pkg/catalogv2/content/content.go filters a
// repository's charts by rancher-version).
var versionAnnotations = []string{"catalog.cattle.io/kube-version", "catalog.cattle.io/rancher-version", "catalog.cattle.io/ui-extensions-version"}

// checkChart lints the chart the release packaged and renders it with helm for each architecture as `helm
// install -n cattle-ui-plugin-system --set arch=<arch>` would: the NodeDriver must name the release's archive of
// the second name with its checksum, and the UIPlugin the extension's archive the release publishes, which must
// unpack the way Rancher serves it.
func checkChart(t *testing.T, root, dist string, sums map[string]string) {
	helmDir, err := repo.ToolDir(context.Background(), "helm", "DMDH_HELM_BIN")
	if err != nil {
		t.Fatalf("building helm with hack/tools.sh: %v", err)
	}
	helm := filepath.Join(helmDir, "helm")
	var meta releaseMeta
	readJSON(t, filepath.Join(dist, "metadata.json"), &meta)
	chart := filepath.Join(dist, "hcivm-"+meta.Version+".tgz")
	if _, err := os.Stat(chart); err != nil {
		t.Fatalf("the release has no chart for version %s: %v", meta.Version, err)
	}
	var ext extensionPackage
	readJSON(t, filepath.Join(root, "ui", "pkg", identity.Release, "package.json"), &ext)
	uiArchive := ext.Name + "-ui-" + ext.Version + ".tgz"

	if out, err := exec.Command(helm, "lint", "--strict", "-n", pluginNamespace, chart).CombinedOutput(); err != nil {
		t.Errorf("helm lint: %v\n%s", err, out)
	}
	t.Run("Chart.yaml", func(t *testing.T) { checkChartMetadata(t, root, helm, chart, ext) })
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run("helm template arch="+arch, func(t *testing.T) {
			docs := helmTemplate(t, helm, chart, pluginNamespace, "--set", "arch="+arch)
			if len(docs) != 3 {
				t.Fatalf("%d objects rendered, want the NodeDriver, the UIPlugin and the Role the driver's rm reads the cluster with:\n%s", len(docs), bytes.Join(docs, []byte("---\n")))
			}
			byKind := map[string][]byte{}
			for _, doc := range docs {
				var o struct{ Kind string }
				unmarshal(t, doc, &o)
				byKind[o.Kind] = doc
			}
			var nd nodedriver.NodeDriver
			var plugin renderedUIPlugin
			unmarshal(t, byKind["NodeDriver"], &nd)
			unmarshal(t, byKind["UIPlugin"], &plugin)
			if byKind["Role"] == nil {
				t.Errorf("no Role rendered: %s", bytes.Join(docs, []byte("---\n")))
			}

			archive := nodedriver.Archive(identity.Release, arch)
			if nd.Kind != "NodeDriver" || nd.Metadata.Name != identity.Release || nd.Spec.DisplayName != identity.Release || !nd.Spec.Active || nd.Spec.Builtin {
				t.Errorf("NodeDriver %+v", nd)
			}
			// A snapshot is the chart the tag v<version> would publish (hack/helm-chart.sh): every URL names it.
			if want := release.URL(ext.Version, archive); nd.Spec.URL != want {
				t.Errorf("NodeDriver url %s, want %s", nd.Spec.URL, want)
			}
			if sums[archive] == "" || nd.Spec.Checksum != sums[archive] {
				t.Errorf("NodeDriver checksum %q, the release's %s is %q", nd.Spec.Checksum, archive, sums[archive])
			}
			if len(nd.Spec.WhitelistDomains) != 1 || nd.Spec.WhitelistDomains[0] != "github.com" {
				t.Errorf("NodeDriver whitelistDomains %v", nd.Spec.WhitelistDomains)
			}
			if got, want := nd.Metadata.Annotations, nodedriver.CredentialAnnotations(); !reflect.DeepEqual(got, want) {
				t.Errorf("NodeDriver annotations %v, want the credential type's %v", got, want)
			}

			p := plugin.Spec.Plugin
			if plugin.Kind != "UIPlugin" || plugin.Metadata.Namespace != pluginNamespace || p.Name != ext.Name || p.Version != ext.Version {
				t.Errorf("UIPlugin %s %s/%s for %s %s, want %s %s in %s", plugin.Kind, plugin.Metadata.Namespace, plugin.Metadata.Name, p.Name, p.Version, ext.Name, ext.Version, pluginNamespace)
			}
			if want := release.URL(ext.Version, uiArchive); p.CompressedEndpoint != want || p.NoCache {
				t.Errorf("UIPlugin compressedEndpoint %s (noCache %v), want %s, cached", p.CompressedEndpoint, p.NoCache, want)
			}
			// The dashboard loads the extension where the UIPlugin's metadata allows (shouldNotLoadPlugin): the
			// extension's own annotations, as rancher/dashboard's extension chart passes them (pluginMetadata).
			if !reflect.DeepEqual(p.Metadata, ext.Rancher.Annotations) {
				t.Errorf("UIPlugin metadata %v, want the extension's annotations %v", p.Metadata, ext.Rancher.Annotations)
			}
		})
	}
	t.Run("namespace", func(t *testing.T) {
		out, err := exec.Command(helm, "template", "hcivm", chart, "-n", "default").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "must be in "+pluginNamespace) {
			t.Errorf("rendered outside %s (where Rancher never sees the UIPlugin): %v\n%s", pluginNamespace, err, out)
		}
	})
	t.Run(uiArchive, func(t *testing.T) { checkUIArchive(t, root, uiArchive, ext.Name, ext.Version, sums) })
}

// checkChartMetadata checks the packaged Chart.yaml: one version for the chart, its appVersion and the extension,
// since Rancher 2.12's Extensions page compares the UIPlugin's version with the chart's version (rancher/dashboard
// v2.12.12 shell/pages/c/_cluster/uiplugins/index.vue, available) and 2.13 to 2.15 with its appVersion (`appVersion
// ?? version`); the extension's version annotations; and the icon the extension registers for the driver's tile
// (ui/pkg/hcivm/icon.svg), as a data: URL the dashboard shows as an image source.
func checkChartMetadata(t *testing.T, root, helm, chart string, ext extensionPackage) {
	out, err := exec.Command(helm, "show", "chart", chart).Output()
	if err != nil {
		t.Fatalf("helm show chart: %v", err)
	}
	var c chartMetadata
	unmarshal(t, out, &c)
	if c.Name != ext.Name || c.Version != ext.Version || c.AppVersion != ext.Version {
		t.Errorf("chart %s version %s appVersion %s; want %s with the extension's version %s as both", c.Name, c.Version, c.AppVersion, ext.Name, ext.Version)
	}
	for _, a := range versionAnnotations {
		if c.Annotations[a] == "" || c.Annotations[a] != ext.Rancher.Annotations[a] {
			t.Errorf("chart annotation %s is %q, the extension's %q", a, c.Annotations[a], ext.Rancher.Annotations[a])
		}
	}
	for a, want := range map[string]string{"catalog.cattle.io/ui-component": "plugins", "catalog.cattle.io/namespace": pluginNamespace, "catalog.cattle.io/scope": "management"} {
		if c.Annotations[a] != want {
			t.Errorf("chart annotation %s is %q, want %q (what makes Rancher list it as an extension for %s)", a, c.Annotations[a], want, pluginNamespace)
		}
	}
	svg, err := os.ReadFile(filepath.Join(root, "ui", "pkg", identity.Release, "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg); c.Icon != want {
		t.Errorf("chart icon %.80q…, want ui/pkg/%s/icon.svg as a data: URL", c.Icon, identity.Release)
	}
}

// checkUIArchive checks the extension's archive goreleaser checksummed and publishes (.goreleaser.yaml, checksum
// and release extra_files): Rancher's cache of it serves the script the dashboard loads.
func checkUIArchive(t *testing.T, root, name, ext, version string, sums map[string]string) {
	var cfg struct {
		Release struct {
			ExtraFiles []struct{ Glob string } `json:"extra_files"`
		}
	}
	config, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	unmarshal(t, config, &cfg)
	var local string
	for _, f := range cfg.Release.ExtraFiles {
		if ok, _ := path.Match(f.Glob, "ui/dist/"+name); ok {
			local = filepath.Join(root, "ui", "dist", name)
		}
	}
	if local == "" {
		t.Fatalf(".goreleaser.yaml release.extra_files %v does not publish ui/dist/%s", cfg.Release.ExtraFiles, name)
	}
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatalf("the release's before hook (make ui-extension) wrote no %s: %v", local, err)
	}
	if sum := sha256.Sum256(data); sums[name] != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256sums.txt says %q for %s, the archive's sha256 is %x", sums[name], name, sum)
	}
	served, err := uiplugin.Served(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Rancher cannot cache %s: %v", name, err)
	}
	main := version + "/plugin/" + uiplugin.MainFile(ext, version)
	if len(served[main]) == 0 {
		t.Errorf("Rancher would not serve /v1/uiplugins/%s/%s", ext, main)
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(served[version+"/plugin/package.json"], &pkg); err != nil || pkg.Name != ext || pkg.Version != version {
		t.Errorf("plugin/package.json is %+v (%v), want %s %s", pkg, err, ext, version)
	}
	// The icon the extension registers (ui/pkg/hcivm/index.ts) is built in as a file of its own (webpack's asset
	// modules), which Rancher serves beside the script.
	svg, err := os.ReadFile(filepath.Join(root, "ui", "pkg", ext, "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	var icons []string
	for name, body := range served {
		if strings.HasPrefix(name, version+"/plugin/") && bytes.Equal(body, svg) {
			icons = append(icons, name)
		}
	}
	if len(icons) == 0 {
		t.Errorf("the archive serves no copy of ui/pkg/%s/icon.svg, the driver's icon", ext)
	}
}

// helmTemplate renders chart into namespace and returns its objects' YAML documents.
func helmTemplate(t *testing.T, helm, chart, namespace string, args ...string) [][]byte {
	t.Helper()
	cmd := exec.Command(helm, append([]string{"template", "hcivm", chart, "-n", namespace}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	return splitDocs(out)
}

// splitDocs splits a stream of YAML documents as helm writes them, leaving out empty ones.
func splitDocs(stream []byte) [][]byte {
	var docs [][]byte
	for _, doc := range bytes.Split(stream, []byte("\n---\n")) {
		if len(bytes.TrimSpace(bytes.TrimPrefix(doc, []byte("---")))) != 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func unmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
}
