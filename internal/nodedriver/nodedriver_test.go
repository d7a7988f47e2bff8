package nodedriver

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
)

const sum = "7db00430a1c047e6627681446a99219815156e971043ba7a22a083d69fafe44a"

func TestManifestIsTheNodeDriverRancherReads(t *testing.T) {
	url := "https://github.com/harvester/docker-machine-driver-harvester/releases/download/v9.9.9/" + Archive(identity.Release, "arm64")
	out, err := Manifest(Spec{Name: identity.Release, URL: url, Checksum: strings.ToUpper(sum), Version: "v9.9.9", Arch: "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	// The comment says what Rancher's generic forms need, for every Rancher version the chart accepts.
	comment, body, _ := strings.Cut(string(out), "\napiVersion:")
	for _, line := range strings.Split(comment, "\n") {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("the comment's line %q is no comment", line)
		}
	}
	for _, want := range []string{"v9.9.9 (arm64)", "named hcivm", "base64-encoded", "2.12 to 2.14 show a multi-line text area",
		"2.15 a\n# one-line password input", "Set clusterName in each machine config"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comment)
		}
	}
	if strings.Contains(comment, "the field is one line") || !strings.HasPrefix(body, " management.cattle.io/v3") {
		t.Errorf("manifest:\n%s", out)
	}
	var nd NodeDriver
	if err := yaml.UnmarshalStrict(out, &nd); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if nd.APIVersion != "management.cattle.io/v3" || nd.Kind != "NodeDriver" || nd.Metadata.Name != identity.Release || nd.Spec.DisplayName != identity.Release {
		t.Errorf("object: %s %s %s (display %s)", nd.APIVersion, nd.Kind, nd.Metadata.Name, nd.Spec.DisplayName)
	}
	if !nd.Spec.Active || nd.Spec.Builtin || nd.Spec.URL != url || nd.Spec.Checksum != sum {
		t.Errorf("spec: %+v", nd.Spec)
	}
	if len(nd.Spec.WhitelistDomains) != 1 || nd.Spec.WhitelistDomains[0] != "github.com" {
		t.Errorf("whitelistDomains %v", nd.Spec.WhitelistDomains)
	}
	// download_driver.sh names the driver after the URL's file name, cut at the first '-', '_' or '.'.
	file := url[strings.LastIndex(url, "/")+1:]
	if got := regexp.MustCompile(`[-_.].*$`).ReplaceAllString(strings.TrimPrefix(file, identity.BinaryPrefix), ""); got != identity.Release {
		t.Errorf("Rancher's download script would name the driver %q", got)
	}
	// The credential type as Rancher declares its built-in Harvester credential (machinedriver_data.go
	// DriverData[HarvesterDriver], annotations written by getAnnotations; defaults as ParseKeyValueString reads them).
	want := map[string]string{
		"privateCredentialFields":  "kubeconfigContent",
		"publicCredentialFields":   "clusterType,clusterId",
		"optionalCredentialFields": "clusterId",
		"defaults":                 "clusterType:imported",
	}
	if !reflect.DeepEqual(nd.Metadata.Annotations, want) {
		t.Errorf("annotations %v, want %v", nd.Metadata.Annotations, want)
	}
	// The credential fields must be fields of the driver's schema: Rancher's field of flag <name>-kubeconfig-content.
	fields := map[string]bool{}
	for _, f := range config.CreateFlags() {
		fields[lowerCamelAfterPrefix(f.String())] = true
	}
	for _, f := range append(append([]string{}, CredentialFields...), PublicCredentialFields...) {
		if !fields[f] {
			t.Errorf("credential field %s is no field of the driver", f)
		}
	}
}

// lowerCamelAfterPrefix is Rancher's flag → field name (nodedriver/utils.go ToLowerCamelCase).
func lowerCamelAfterPrefix(flag string) string {
	_, rest, _ := strings.Cut(flag, "-")
	parts := strings.Split(rest, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

func TestManifestRefusesWhatRancherCannotUse(t *testing.T) {
	good := Spec{Name: identity.Release, URL: "https://example.com/x/" + Archive(identity.Release, "amd64"), Checksum: sum}
	for name, s := range map[string]Spec{
		"canonical name":  {Name: identity.Canonical, URL: good.URL, Checksum: sum},
		"digit first":     {Name: "2hci", URL: good.URL, Checksum: sum},
		"name with a dot": {Name: "hci.vm", URL: good.URL, Checksum: sum},
		"short checksum":  {Name: good.Name, URL: good.URL, Checksum: sum[:40]},
		"not hex":         {Name: good.Name, URL: good.URL, Checksum: strings.Repeat("z", 64)},
		"http URL":        {Name: good.Name, URL: "http://example.com/x", Checksum: sum},
	} {
		if _, err := Manifest(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Manifest(good); err != nil {
		t.Errorf("a good spec refused: %v", err)
	}
}

func TestReadChecksums(t *testing.T) {
	sums, err := ReadChecksums(strings.NewReader(sum + "  a.tar.gz\n" + sum[1:] + "0 *b.tar.gz\nnoise\n"))
	if err != nil || sums["a.tar.gz"] != sum || sums["b.tar.gz"] != sum[1:]+"0" || len(sums) != 2 {
		t.Errorf("ReadChecksums = %v, %v", sums, err)
	}
}
