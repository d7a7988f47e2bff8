package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/repo"
)

// Where Rancher's image holds its built-in Harvester driver: rancher/rancher package/Dockerfile (the RUN that
// installs DOCKER_MACHINE_HARVESTER_VERSION, v2.12.12 to v2.15.0) extracts the release archive into the
// management-state bin directory and links the binary into the UI's assets folder. The server runs the first to
// read the driver's flags (pkg/controllers/management/drivers/nodedriver/utils.go getCreateFlagsForDriver);
// provisioning jobs download the second when it exists (pkg/controllers/capr/machineprovision/args.go
// getDriverDownloadURL): settings.UIPath's assets before 2.15 (/usr/share/rancher/ui, whose link the v2.12.12,
// v2.13.8 and v2.14.4 images make), settings.UIDashboardPath's since v2.15.0 (/usr/share/rancher/ui-dashboard).
const (
	rancherDriverBin = "/opt/drivers/management-state/bin/docker-machine-driver-harvester"
	rancherImage     = "rancher/rancher"
	dockerfilePath   = "package/rancher/Dockerfile"
)

// rancherAssetsLinks are the links getDriverDownloadURL reads, by the Rancher versions that read them.
var rancherAssetsLinks = map[string]string{
	"/usr/share/rancher/ui/assets/docker-machine-driver-harvester":           "Rancher 2.12 to 2.14 (settings.UIPath)",
	"/usr/share/rancher/ui-dashboard/assets/docker-machine-driver-harvester": "Rancher 2.15 (settings.UIDashboardPath)",
}

// instruction is one Dockerfile instruction: its keyword and the rest of its (joined) lines.
type instruction struct {
	cmd, args string
}

// dockerfileInstructions reads a Dockerfile's instructions, joining continued lines and dropping comments.
func dockerfileInstructions(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	return out
}

func TestRancherImageDockerfilePutsTheDriverWhereRancherLooks(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, dockerfilePath))
	if err != nil {
		t.Fatal(err)
	}
	ins := dockerfileInstructions(string(text))
	if len(ins) < 2 || ins[0] != (instruction{"ARG", "RANCHER_VERSION"}) || ins[1] != (instruction{"FROM", rancherImage + ":${RANCHER_VERSION}"}) {
		t.Fatalf("%s must start with ARG RANCHER_VERSION (no default: it is the Rancher the user runs) and FROM %s:${RANCHER_VERSION}; it starts %v",
			dockerfilePath, rancherImage, ins[:min(2, len(ins))])
	}
	var copied, targetArch bool
	linked := map[string]bool{}
	for _, in := range ins[2:] {
		switch in.cmd {
		case "FROM":
			t.Errorf("a second stage (%s): the image must be Rancher's own plus the driver", in.args)
		case "ARG":
			targetArch = targetArch || in.args == "TARGETARCH"
		case "COPY", "ADD":
			fields := strings.Fields(in.args)
			dest := fields[len(fields)-1]
			if dest != rancherDriverBin {
				t.Errorf("%s to %s, not to Rancher's driver path %s", in.cmd, dest, rancherDriverBin)
				continue
			}
			copied = true
			if !strings.Contains(in.args, "--chmod=0755") || !strings.Contains(in.args, "--chown=root:root") {
				t.Errorf("the driver must be copied executable and owned by root, as Rancher's archive extracts it: %s %s", in.cmd, in.args)
			}
			if src := fields[len(fields)-2]; src != "docker-machine-driver-harvester-${TARGETARCH}" {
				t.Errorf("copies %s; make rancher-image puts docker-machine-driver-harvester-<arch> into the context", src)
			}
		case "RUN":
			for _, m := range regexp.MustCompile(`ln -[a-z]*s[a-z]* (\S+) (\S+)`).FindAllStringSubmatch(in.args, -1) {
				if _, ok := rancherAssetsLinks[m[2]]; ok && m[1] == rancherDriverBin {
					linked[m[2]] = true
				} else {
					t.Errorf("links %s to %s; Rancher's assets links are %v → %s", m[2], m[1], rancherAssetsLinks, rancherDriverBin)
				}
			}
		}
	}
	if !copied {
		t.Errorf("%s does not copy the driver to %s", dockerfilePath, rancherDriverBin)
	}
	for link, readers := range rancherAssetsLinks {
		if !linked[link] {
			t.Errorf("%s does not link %s to %s (provisioning jobs of %s download the driver from there)", dockerfilePath, link, rancherDriverBin, readers)
		}
	}
	if !targetArch {
		t.Errorf("%s copies per architecture but declares no ARG TARGETARCH after FROM", dockerfilePath)
	}

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-f " + dockerfilePath, "--build-arg RANCHER_VERSION=$(RANCHER_VERSION)", "-o dist/rancher-image/docker-machine-driver-harvester-$$arch"} {
		if !strings.Contains(string(makefile), want) {
			t.Errorf("the Makefile's rancher-image target no longer says %q", want)
		}
	}
}

func TestDockerfileInstructions(t *testing.T) {
	got := dockerfileInstructions("# syntax=docker/dockerfile:1\n# c\nARG A\nFROM x:${A}\nRUN a && \\\n    b   c\n\n# d\nCOPY s d\n")
	want := []instruction{{"ARG", "A"}, {"FROM", "x:${A}"}, {"RUN", "a && b c"}, {"COPY", "s d"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("instruction %d: %v, want %v", i, got[i], want[i])
		}
	}
}
