package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/internal/rancher"
)

// uiConfigFixture is the HcivmConfig the UI extension's machine-config form writes when filled (its Jest test
// ui/test/unit/machine-config.test.js compares the form's value to it).
const uiConfigFixture = "../../ui/test/fixtures/hcivmconfig.json"

// TestUIConfigIsAccepted takes the form's machine config the way Rancher hands it to the driver — each field
// turned into a --hcivm- flag by toArgs under both of Rancher's field-to-flag rules — and parses it with the
// driver's parser; then the way `check --machine-config FILE` reads it, as docker-machine-driver-hcivm.
func TestUIConfigIsAccepted(t *testing.T) {
	raw, err := os.ReadFile(uiConfigFixture)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	if obj["kind"] != "HcivmConfig" {
		t.Fatalf("kind %v, want HcivmConfig", obj["kind"])
	}
	spec := map[string]any{}
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			spec[k] = v
		}
	}
	for _, rule := range rancher.Rules {
		var args []string
		for _, a := range rancher.ToArgs("hcivm", spec, "", rule) {
			canonical, ok := strings.CutPrefix(a, "--hcivm-")
			if !ok {
				t.Fatalf("%s: %s is not a flag of driver hcivm", rule.Name, a)
			}
			args = append(args, "--harvester-"+canonical)
		}
		opts, err := config.ParseArgs(args, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v\nargs: %q", rule.Name, err, args)
		}
		cfg, err := config.ParseConfig("mycluster-pool1-abc12", opts)
		if err != nil {
			t.Fatalf("%s: the driver refuses the form's config: %v", rule.Name, err)
		}
		// What the form set arrives: a sample of the fields, one per kind of field.
		if cfg.ClusterName != "mycluster" || cfg.CPUs != 4 || !cfg.TPMPersistent || len(cfg.Disks) != 2 || len(cfg.NICs) != 1 ||
			len(cfg.VGPUs) != 1 || cfg.IPPool == nil || cfg.CreateTimeout.Seconds() != 1200 || cfg.VMPatch == nil ||
			!cfg.EFIPersistent || cfg.DiskIO != (config.DiskIO{BlockMultiQueue: true, ThreadsPolicy: "supplementalPool", PoolThreads: 4}) {
			t.Errorf("%s: parsed %+v", rule.Name, cfg)
		}
	}

	// check --machine-config, under the second name the form is for: the file is read and its fields become the
	// driver's flags before the command line's.
	asDriver(t, "hcivm")
	in, err := parseCheckArgs([]string{"--machine-name", "mycluster-pool1-abc12", "--machine-config", uiConfigFixture, "--count", "3"}, noEnv)
	if err != nil {
		t.Fatalf("check --machine-config refuses the form's config: %v", err)
	}
	cfg, err := config.ParseConfig(in.machineName, in.opts)
	if err != nil {
		t.Fatalf("check --machine-config: the driver refuses the form's config: %v", err)
	}
	if cfg.ClusterName != "mycluster" || cfg.CPUs != 4 || !cfg.TPMPersistent || len(cfg.Disks) != 2 || len(cfg.VGPUs) != 1 || in.count != 3 {
		t.Errorf("check --machine-config: parsed %+v, count %d", cfg, in.count)
	}
}
