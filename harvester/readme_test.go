package harvester

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the check sample in docs/check.md from the pre-flight's table")

// checkGuide is the guide that shows the check sample, from this package's folder.
const checkGuide = "../docs/check.md"

// readmeCheckSection is the guide's section whose first sh block is a check command line and whose next block is
// what check prints for it.
const readmeCheckSection = "## Check a node template against Harvester\n"

// readmeCheckSample finds the guide's check sample: the command's arguments after "check", and where the printed
// lines start and end in readme.
func readmeCheckSample(t *testing.T, readme string) (args []string, start, end int) {
	t.Helper()
	section := strings.Index(readme, readmeCheckSection)
	if section < 0 {
		t.Fatalf("%s lacks the section %q", checkGuide, strings.TrimSpace(readmeCheckSection))
	}
	cmdStart := strings.Index(readme[section:], "```sh\n")
	if cmdStart < 0 {
		t.Fatal(checkGuide + "'s check section lacks its sh block")
	}
	cmdStart += section + len("```sh\n")
	cmdEnd := cmdStart + strings.Index(readme[cmdStart:], "```\n")
	command := strings.ReplaceAll(readme[cmdStart:cmdEnd], "\\\n", " ")
	for line := range strings.Lines(command) {
		if rest, ok := strings.CutPrefix(line, "docker-machine-driver-harvester check "); ok {
			args = strings.Fields(rest)
		}
	}
	if args == nil {
		t.Fatal(checkGuide + "'s check section has no docker-machine-driver-harvester check command line")
	}
	start = strings.Index(readme[cmdEnd+len("```\n"):], "```\n")
	if start < 0 {
		t.Fatal(checkGuide + "'s check section lacks the block of check's output")
	}
	start += cmdEnd + 2*len("```\n")
	end = start + strings.Index(readme[start:], "```\n")
	return args, start, end
}

// checkLines prints checks as the check verb does (Check.Lines, as cmd/docker-machine-driver-harvester printChecks) under the
// driver's own name.
func checkLines(checks []preflight.Check) string {
	var b strings.Builder
	for _, c := range checks {
		for _, line := range c.Lines(func(s string) string { return s }) {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// The guide's check sample (docs/check.md) is what the check verb's table (the pre-flight's, then the admission's)
// prints for the guide's command line against a Harvester that has neither its image nor its network: every check's line,
// in the table's order, with its skip reason. go test ./harvester -run README -update-readme rewrites it.
func TestREADMECheckSample(t *testing.T) {
	raw, err := os.ReadFile(checkGuide)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	args, start, end := readmeCheckSample(t, readme)
	var machineName string
	credential := func(env string) (string, bool) { // the guide exports a credential Harvester accepts
		return configtest.Kubeconfig, env == config.EnvVar(config.FlagKubeconfigContent)
	}
	opts, err := config.ParseArgs(args, credential, func(fs *flag.FlagSet) { fs.StringVar(&machineName, "machine-name", "", "") })
	if err != nil {
		t.Fatalf("the guide's check command line: %v", err)
	}

	fc := newFakeCluster(t)
	kubefake.CaptureLog(t)
	fc.OK(nil, kube.Delete(context.Background(), fc.C, kube.Networks, "default", "vlan1", metav1.DeleteOptions{}))
	got := checkLines(newTestDriver(t, fc, machineName, opts).verbChecks(t))
	if *updateREADME {
		if err := os.WriteFile(checkGuide, []byte(readme[:start]+got+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := readme[start:end]; got != want {
		t.Errorf("%s's check sample is not what check prints (go test ./harvester -run README -update-readme); it shows:\n%scheck prints:\n%s", checkGuide, want, got)
	}
}
