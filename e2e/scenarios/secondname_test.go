package scenarios

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/standin"
	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester/identity"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// The second node driver on a stock Rancher: the same binary installed as docker-machine-driver-hcivm (a copy,
// as Rancher's download script moves the downloaded file into place), driven by the real rancher-machine the way
// Rancher's provisioning job drives a node driver named hcivm — the cloud credential's fields as HCIVM_…
// variables, the machine config's fields as --hcivm-… flags split by the job's entrypoint, `rm -y
// --update-config` to delete — through create, status, ip and rm. A name with a digit (hci2) is a driver the
// same way: Rancher's download cut and flag rules keep digits.
func TestSecondDriverNameThroughRancherMachine(t *testing.T) {
	for _, driver := range []string{identity.Release, "hci2"} {
		t.Run(driver, func(t *testing.T) { secondDriverThroughRancherMachine(t, driver) })
	}
}

func secondDriverThroughRancherMachine(t *testing.T, driver string) {
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	cli.PluginDir = secondNamePluginDir(t, driver)
	// The cloud credential Secret of the node driver named hcivm (internal/nodedriver: kubeconfigContent private,
	// clusterType and clusterId public), as the dashboard stores it (<driver>credentialConfig-<field>), made from
	// an imported Harvester cluster, with the kubeconfig in base64 (a password field is one line). The job hands
	// the driver every field; it reads the kubeconfig and ignores the other two.
	cli.Env = rancherCredentialEnv(driver, map[string]string{
		driver + "credentialConfig-kubeconfigContent": base64.StdEncoding.EncodeToString(b.AdminKubeconfig()),
		driver + "credentialConfig-clusterType":       "imported",
		driver + "credentialConfig-clusterId":         "c-m-abc12",
	})
	// No other credential to fall back on: a driver that read $HARVESTER_KUBECONFIG_CONTENT or $KUBECONFIG would fail.
	cli.Env = append(cli.Env, "KUBECONFIG="+filepath.Join(t.TempDir(), "absent"))
	machineConfig := secondNameMachineConfig(ns)
	const name = "gc2-pool1-abcde-fghij"
	script := filepath.Join(t.TempDir(), "install.sh")
	if err := os.WriteFile(script, []byte(installScript), 0o644); err != nil {
		t.Fatal(err)
	}
	create := append([]string{"create", "--driver=" + driver, "--custom-install-script=" + script}, rancherArgs(driver, machineConfig)...)
	quiet(t, cli.must(entrypointSplit(append(create, name))...))

	ctx := context.Background()
	vm, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no VM after create under the second name: %v", err)
	}
	for k, want := range map[string]string{"harvesterhci.io/creator": "docker-machine-driver-harvester",
		"guestcluster.harvesterhci.io/name": "gc2", "nodepool.harvesterhci.io/name": "pool1-abcde"} {
		if vm.Labels[k] != want {
			t.Errorf("VM label %s = %q, want %q", k, vm.Labels[k], want)
		}
	}
	if cores := vm.Spec.Template.Spec.Domain.CPU.Cores; cores != 2 {
		t.Errorf("VM has %d cores, the machine config said 2", cores)
	}

	var host struct {
		DriverName string
		Driver     map[string]any
	}
	raw, err := os.ReadFile(filepath.Join(cli.Store, "machines", name, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &host); err != nil {
		t.Fatal(err)
	}
	if host.DriverName != driver || host.Driver["VMNamespace"] != ns || host.Driver["ClusterName"] != "gc2" {
		t.Errorf("saved host: DriverName %q, VMNamespace %v, ClusterName %v", host.DriverName, host.Driver["VMNamespace"], host.Driver["ClusterName"])
	}
	if held := storeFilesHolding(t, cli.Store, name, b.AdminConfig().BearerToken, base64.StdEncoding.EncodeToString(b.AdminKubeconfig())); len(held) > 0 {
		t.Errorf("the credential from $%s_KUBECONFIG_CONTENT is saved in %v", strings.ToUpper(driver), held)
	}

	if out := quiet(t, cli.must("status", name)).Answer(); out != "Running" {
		t.Errorf("status: %q", out)
	}
	ipv4, _ := standin.Addresses(ns, name, 0)
	if out := cli.must("ip", name).Answer(); out != ipv4 {
		t.Errorf("ip: %q, want %s", out, ipv4)
	}
	// Rancher's delete job (args.go getArgsEnvAndStatus): rm -y --update-config <instance>.
	cli.must("rm", "-y", "--update-config", name)
	nothingLeft(t, b, ns)
}

// Installed under a name Rancher would not carry intact (here harv.x: Rancher's download would name it harv), the
// plugin does not start: rancher-machine's create fails with the rule, and nothing is made in Harvester or saved
// under that name.
func TestRefusedDriverNameThroughRancherMachine(t *testing.T) {
	const driver = "harv.x"
	b := testbed.Shared(t)
	ns := b.Namespace(t)
	cli := newCLI(t, b.AdminKubeconfig())
	cli.PluginDir = secondNamePluginDir(t, driver)
	cli.Env = append(cli.Env, "KUBECONFIG="+filepath.Join(t.TempDir(), "absent"))
	// The flags of the canonical driver, which a binary that took itself for harvester would declare and take.
	const name = "gc2-refused-abcde-fghij"
	r := cli.run(entrypointSplit(append(append([]string{"create", "--driver=" + driver}, rancherArgs(identity.Canonical, secondNameMachineConfig(ns))...), name))...)
	if r.Err == nil || !strings.Contains(r.Output, identity.NameRule) {
		t.Errorf("create under docker-machine-driver-%s: want it to fail with the rule, got %s", driver, r)
	}
	if _, err := b.Virt.KubevirtV1().VirtualMachines(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		t.Errorf("a VM was made under the refused name")
	}
	if raw, err := os.ReadFile(filepath.Join(cli.Store, "machines", name, "config.json")); err == nil && strings.Contains(string(raw), `"DriverName": "harvester"`) {
		t.Errorf("the machine was saved under the canonical driver:\n%s", raw)
	}
	nothingLeft(t, b, ns)
}

// secondNameMachineConfig is a machine config (<Driver>Config) as Rancher stores it: ints as strings. clusterName
// is set by hand: Rancher appends --harvester-cluster-name only for the driver named harvester.
func secondNameMachineConfig(ns string) map[string]any {
	return map[string]any{
		"vmNamespace":   ns,
		"imageName":     "default/ubuntu-22.04",
		"diskSize":      "10",
		"networkName":   "default/vm-untag",
		"cpuCount":      "2",
		"memorySize":    "4",
		"createTimeout": "120",
		"clusterName":   "gc2",
		"enableEfi":     false,
	}
}

// secondNamePluginDir copies the built plugin into a directory of its own as docker-machine-driver-<driver>, the
// only plugin rancher-machine finds there.
func secondNamePluginDir(t *testing.T, driver string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(binDir, "docker-machine-driver-harvester"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, identity.BinaryPrefix+driver), data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rancherCredentialEnv names a cloud credential Secret's keys the way Rancher's provisioning job does for driver
// (internal/rancher Rule.Env, from args.go getArgsEnvAndStatus).
func rancherCredentialEnv(driver string, secret map[string]string) []string {
	var env []string
	for k, v := range secret {
		env = append(env, rancher.Since213.Env(driver, k)+"="+v)
	}
	sort.Strings(env)
	return env
}

// rancherArgs are the flags Rancher's job passes for a machine config of driver (internal/rancher ToArgs, from
// args.go toArgs); only the driver named harvester would also get --harvester-cluster-name.
func rancherArgs(driver string, config map[string]any) []string {
	return rancher.ToArgs(driver, config, "", rancher.Since213)
}

// entrypointSplit is what rancher/machine's package/entrypoint.sh does to the job's arguments before it runs
// rancher-machine: each --flag=value becomes --flag value.
func entrypointSplit(args []string) []string {
	var out []string
	for _, a := range args {
		if flag, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "--") {
			out = append(out, flag, value)
			continue
		}
		out = append(out, a)
	}
	return out
}
