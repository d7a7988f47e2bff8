package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/e2e/controlplane"
	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/nodedriver"
	"github.com/harvester/docker-machine-driver-harvester/internal/release"
	"github.com/harvester/docker-machine-driver-harvester/internal/testenv"
)

// helmRelease is what `helm install|upgrade -o json` prints of a release (helm.sh/helm/v3 pkg/release Release),
// as the memory driver reads it back (HELM_MEMORY_DRIVER_DATA: a YAML list of them).
type helmRelease struct {
	Name, Namespace, Manifest string
	Version                   int
	Info                      struct{ Status string }
	Chart                     struct {
		Metadata struct{ Version, AppVersion string }
	}

	printed json.RawMessage // the whole release as helm printed it, for the memory store of the next run
}

// renderedObject is what the test reads of each object a release renders.
type renderedObject struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	Spec     struct {
		URL    string
		Plugin struct{ Version, Endpoint, CompressedEndpoint string }
	}
	Rules []struct{ APIGroups, Resources, Verbs []string }
}

// The chart of this release, then of the next, installed and upgraded with Helm's own install and upgrade: the
// helm CLI (hack/tools.sh helm) with its memory storage driver (HELM_DRIVER=memory, the release installed before
// loaded from HELM_MEMORY_DRIVER_DATA) and the printing KubeClient that driver comes with (helm.sh/helm/v3
// pkg/cmd/root.go, loadReleasesInMemory), so nothing is applied; helm asks the real kube-apiserver only for the
// cluster's capabilities. After every kind of upgrade — the values reused (--reuse-values, which puts the old
// chart's values in place of the new chart's values.yaml: pkg/action/upgrade.go, reuseValues), none given (the
// values given at install are copied), reset, reset then reused — every URL the NodeDriver and the UIPlugin name is
// the new release's, and the values given at install (arch, a mirror) still hold where they are kept.
func TestChartUpgradeNamesTheNewRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("needs helm and a real kube-apiserver (skipped with -short)")
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	helmDir, err := repo.ToolDir(context.Background(), "helm", "DMDH_HELM_BIN")
	if err != nil {
		testenv.Unavailable(t, "helm", err)
	}
	if _, err := repo.ToolDir(context.Background(), "controlplane", controlplane.BinEnv); err != nil {
		testenv.Unavailable(t, "control-plane binaries", err)
	}
	version, err := release.Version(root)
	if err != nil {
		t.Fatal(err)
	}
	next := nextMinor(t, version)
	dir := t.TempDir()
	oldChart, newChart := packChart(t, root, dir, version), packChart(t, root, dir, next)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	h := &helmCLI{t: t, bin: filepath.Join(helmDir, "helm"), dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), cp.AdminKubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}

	// A value that named one version's files is refused, not dropped without a word under --reuse-values.
	for _, old := range []string{"compressedEndpoint", "endpoint"} {
		out, err := exec.Command(h.bin, "template", release.Chart, newChart, "-n", release.Namespace, "--set", "plugin."+old+"=https://mirror.example/x").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "plugin."+old+" is no longer read") {
			t.Errorf("plugin.%s set: %v\n%s", old, err, out)
		}
	}

	// Under --reuse-values from a chart without volumeCleanup, the value is missing altogether (helm's
	// --set key=null deletes it the same way): the Role is made, in fleet-default, as the defaults say.
	out, err := exec.Command(h.bin, "template", release.Chart, newChart, "-n", release.Namespace, "--set", "volumeCleanup=null").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "name: rke2-machine-provisioner\n  namespace: \"fleet-default\"") {
		t.Errorf("volumeCleanup missing: %v\n%s", err, out)
	}

	const mirror = "http://mirror.example:8080/hcivm"
	for _, c := range []struct {
		name    string
		install []string // values given at install
		upgrade []string // the upgrade's own flags
		arch    string   // the NodeDriver's architecture after the upgrade
		base    string   // where the UIPlugin's archive is downloaded from after the upgrade
	}{
		{"--reuse-values", []string{"--set", "arch=arm64"}, []string{"--reuse-values"}, "arm64", release.DownloadBase},
		{"no values given", []string{"--set", "arch=arm64"}, nil, "arm64", release.DownloadBase},
		{"--reset-values", []string{"--set", "arch=arm64"}, []string{"--reset-values"}, "amd64", release.DownloadBase},
		{"--reset-then-reuse-values", []string{"--set", "arch=arm64"}, []string{"--reset-then-reuse-values"}, "arm64", release.DownloadBase},
		{"--reuse-values with a mirror", []string{"--set", "plugin.downloadBase=" + mirror + "/"}, []string{"--reuse-values"}, "amd64", mirror},
		{"--reuse-values, cleanup off", []string{"--set", "volumeCleanup.enabled=false"}, []string{"--reuse-values"}, "amd64", release.DownloadBase},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			installed := h.run(nil, append([]string{"install", release.Chart, oldChart, "-n", release.Namespace, "--create-namespace"}, c.install...)...)
			installedArch := "amd64" // as installed, before the upgrade (--reset-values changes it)
			if slices.Contains(c.install, "arch=arm64") {
				installedArch = "arm64"
			}
			checkRelease(t, installed, version, installedArch, c.base, !strings.Contains(strings.Join(c.install, " "), "volumeCleanup.enabled=false"))
			upgraded := h.run(&installed, append([]string{"upgrade", release.Chart, newChart, "-n", release.Namespace}, c.upgrade...)...)
			if upgraded.Version != 2 || upgraded.Info.Status != "deployed" {
				t.Errorf("the upgrade made revision %d, %s; want revision 2, deployed", upgraded.Version, upgraded.Info.Status)
			}
			cleanup := !strings.Contains(strings.Join(c.install, " "), "volumeCleanup.enabled=false") || c.name == "--reset-values"
			checkRelease(t, upgraded, next, c.arch, c.base, cleanup)
		})
	}
}

// checkRelease checks the objects of a release of the chart of version: every URL names that release, the
// NodeDriver's archive is of arch, the UIPlugin's archive comes from base, and the Role the driver's rm reads the
// cluster with is there when cleanup is on.
func checkRelease(t *testing.T, r helmRelease, version, arch, base string, cleanup bool) {
	t.Helper()
	if m := r.Chart.Metadata; m.Version != version || m.AppVersion != version {
		t.Errorf("release of chart %s (appVersion %s), want %s", m.Version, m.AppVersion, version)
	}
	kinds := map[string]int{}
	for _, doc := range splitDocs([]byte(r.Manifest)) {
		var o renderedObject
		unmarshal(t, doc, &o)
		kinds[o.Kind]++
		switch o.Kind {
		case "NodeDriver":
			if want := release.URL(version, nodedriver.Archive(identity.Release, arch)); o.Spec.URL != want {
				t.Errorf("NodeDriver url %s, want %s", o.Spec.URL, want)
			}
		case "UIPlugin":
			p := o.Spec.Plugin
			if want := base + "/" + release.Tag(version) + "/" + release.UIArchive(version); p.CompressedEndpoint != want || p.Version != version || p.Endpoint != "" {
				t.Errorf("UIPlugin version %s, compressedEndpoint %s, endpoint %q; want %s, %s, none", p.Version, p.CompressedEndpoint, p.Endpoint, version, want)
			}
		case "Role":
			if o.Metadata.Name != "rke2-machine-provisioner" || o.Metadata.Namespace != "fleet-default" || len(o.Rules) != 1 ||
				fmt.Sprint(o.Rules[0].APIGroups, o.Rules[0].Resources, o.Rules[0].Verbs) != "[cluster.x-k8s.io] [clusters] [get]" {
				t.Errorf("Role %+v, want rke2-machine-provisioner in fleet-default allowed to get clusters.cluster.x-k8s.io alone", o)
			}
		default:
			t.Errorf("the release renders a %s", o.Kind)
		}
	}
	want := map[string]int{"NodeDriver": 1, "UIPlugin": 1}
	if cleanup {
		want["Role"] = 1
	}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("the release renders %v, want %v", kinds, want)
	}
}

// helmCLI runs helm with the memory storage driver, its configuration and cache in dir.
type helmCLI struct {
	t        *testing.T
	bin, dir string
}

// run runs helm args with the release before (nil: none) in its memory store and returns the release it prints.
func (h *helmCLI) run(before *helmRelease, args ...string) helmRelease {
	h.t.Helper()
	store, err := os.CreateTemp(h.dir, "releases-*.yaml")
	if err != nil {
		h.t.Fatal(err)
	}
	releases := []json.RawMessage{}
	if before != nil {
		releases = append(releases, before.printed)
	}
	data, _ := json.Marshal(releases) // a JSON list is a YAML list
	if _, err := store.Write(data); err != nil {
		h.t.Fatal(err)
	}
	store.Close()
	cmd := exec.Command(h.bin, append(args, "-o", "json")...)
	cmd.Env = append(os.Environ(),
		"HELM_DRIVER=memory", "HELM_MEMORY_DRIVER_DATA="+store.Name(), "KUBECONFIG="+filepath.Join(h.dir, "kubeconfig"),
		"HELM_CACHE_HOME="+filepath.Join(h.dir, "cache"), "HELM_CONFIG_HOME="+filepath.Join(h.dir, "config"), "HELM_DATA_HOME="+filepath.Join(h.dir, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var r helmRelease
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		h.t.Fatalf("helm %s printed no release: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
	r.printed = stdout.Bytes()
	return r
}

// packChart packs the chart of version as the release v<version> would (hack/helm-chart.sh), with a checksum
// file for the NodeDrivers' archives, into dir.
func packChart(t *testing.T, root, dir, version string) string {
	t.Helper()
	var sums strings.Builder
	for _, arch := range []string{"amd64", "arm64"} {
		sum := sha256.Sum256([]byte(version + arch))
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), nodedriver.Archive(identity.Release, arch))
	}
	sumsFile := filepath.Join(dir, "sha256sums-"+version+".txt")
	if err := os.WriteFile(sumsFile, []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, release.ChartFile(version))
	cmd := exec.Command(filepath.Join(root, "hack", "helm-chart.sh"), sumsFile, release.Tag(version), version, chart)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/helm-chart.sh for %s: %v\n%s", version, err, out)
	}
	return chart
}

// nextMinor is the release after version: its minor number plus one.
func nextMinor(t *testing.T, version string) string {
	t.Helper()
	var major, minor, patch int
	if _, err := fmt.Sscanf(version, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("version %s: %v", version, err)
	}
	return fmt.Sprintf("%d.%d.0", major, minor+1)
}
