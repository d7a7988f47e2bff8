package config_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/log"
	"github.com/rancher/machine/libmachine/mcnflag"

	. "github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/logging"
)

// planted is the secret the corpus hides in every input: what matters is that it never comes back out.
const planted = "PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj"

// secretForms are the shapes credentials come in: a bare token, Rancher's token, a URL with a password, a YAML
// line, a kubeconfig, an Authorization header, JSON.
var secretForms = []string{
	planted,
	"kubeconfig-u-abcde:" + planted,
	"https://admin:" + planted + "@192.0.2.1:6443/k8s/clusters/c-1",
	"token: " + planted,
	"apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {token: " + planted + "}\n",
	"Bearer " + planted,
	`{"token":"` + planted + `"}`,
}

// jsonFields plants a form in every string field of each JSON flag, and in both halves of a label.
func jsonFields(form string) map[string][]string {
	q := fmt.Sprintf("%q", form)
	return map[string][]string{
		FlagDiskInfo: {
			`{"disks":[{"imageName":` + q + `,"size":1}]}`, `{"disks":[{"storageClassName":` + q + `,"size":1}]}`,
			`{"disks":[{"imageName":"a","size":` + q + `}]}`, `{"disks":[{"imageName":"a","size":1,"bus":` + q + `}]}`,
			`{"disks":[{"imageName":"a","size":1,"type":` + q + `}]}`, `{"disks":[{"imageName":"a","size":1,"accessMode":` + q + `}]}`,
			`{"disks":[{"imageName":"a","size":1,"volumeMode":` + q + `}]}`, `{"disks":[{"imageName":"a","size":1,"bootOrder":` + q + `}]}`,
		},
		FlagNetworkInfo: {
			`{"interfaces":[{"networkName":` + q + `}]}`, `{"interfaces":[{"networkName":"n","macAddress":` + q + `}]}`,
			`{"interfaces":[{"networkName":"n","model":` + q + `}]}`, `{"interfaces":[{"networkName":"n","type":` + q + `}]}`,
		},
		FlagVGPUInfo:       {`{"vGPURequests":[{"name":` + q + `,"deviceName":"nvidia.com/A2"}]}`, `{"vGPURequests":[{"name":"g","deviceName":` + q + `}]}`},
		FlagHostDeviceInfo: {`{"hostDevices":[{"name":` + q + `,"deviceName":"nvidia.com/A2"}]}`, `{"hostDevices":[{"name":"g","deviceName":` + q + `}]}`},
		FlagVMAffinity: {
			`{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":` + q + `,"operator":"In","values":["a"]}]}]}}}`,
			`{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":` + q + `,"values":["a"]}]}]}}}`,
			`{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In","values":[` + q + `]}]}]}}}`,
		},
		FlagVMLabels: {"team=" + form, form + "=x", form},
		FlagVMPatch: {
			`{"metadata":{"annotations":{"a":` + q + `}}}`, `{` + q + `:1,` + q + `:2}`, `[{"op":` + q + `,"path":"/a"}]`,
			`[{"op":"add","path":` + q + `,"value":1}]`, `[{"op":"move","path":"/a","from":` + q + `}]`, `[{"op":"remove","path":"/a",` + q + `:1}]`,
		},
	}
}

// The whole parser is run over a corpus with a secret planted in every string flag and in every string field of
// the JSON flags, the documents and the environment; no error, warning or log line may contain it.
func TestNoSecretInAnyMessage(t *testing.T) {
	var logs bytes.Buffer
	log.SetOutWriter(&logs)
	log.SetErrWriter(&logs)
	logging.SetDebugOutput(&logs)
	t.Cleanup(func() {
		log.SetOutWriter(&bytes.Buffer{})
		log.SetErrWriter(&bytes.Buffer{})
		logging.SetDebugOutput(&bytes.Buffer{})
	})
	check := func(what string, err error) {
		t.Helper()
		if err != nil && strings.Contains(err.Error(), planted) {
			t.Errorf("%s: the error repeats the secret:\n%v", what, err)
		}
	}
	runs := 0
	for _, f := range CreateFlags() {
		if _, ok := f.(*mcnflag.StringFlag); !ok {
			continue
		}
		for i, form := range secretForms {
			_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), f.String(), form))
			check(fmt.Sprintf("--%s, form %d", f.String(), i), err)
			runs++
		}
	}
	for i, form := range secretForms {
		for flag, values := range jsonFields(form) {
			for j, v := range values {
				_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), flag, v))
				check(fmt.Sprintf("--%s, field %d, form %d", flag, j, i), err)
				runs++
			}
		}
		// Documents: a kubeconfig that does not work, user data and network data that do not parse.
		broken := map[string]string{
			FlagKubeconfigContent:   "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {token: " + planted + "}\ncurrent-context: nowhere\n",
			FlagCloudProviderConfig: "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"http://admin:" + planted + "@h\"}\nusers:\n- name: a\n  user: {token: " + planted + "}\ncontexts:\n- name: x\n  context: {cluster: c, user: a}\ncurrent-context: x\n",
			FlagUserData:            "#cloud-config\nusers:\n- name: a\n  passwd: " + planted + "\n  ssh_authorized_keys: [" + planted + "\n",
			FlagNetworkData:         "version: 2\nethernets:\n  " + planted + ": {dhcp4: " + planted + "}\n",
			FlagSSHPassword:         planted + "\n",
		}
		for flag, doc := range broken {
			_, err := ParseConfig("m1", configtest.With(configtest.MinimalOptions(), flag, doc))
			check("--"+flag+" document", err)
			runs++
		}
		// The environment and the command line, as rancher-machine and the render verb read them.
		env := func(name string) (string, bool) {
			return form, strings.HasSuffix(name, "_COUNT") || strings.HasSuffix(name, "_EFI")
		}
		_, err := ParseArgs(nil, env, nil)
		check(fmt.Sprintf("environment, form %d", i), err)
		_, err = ParseArgs([]string{"--harvester-cpu-count", form}, nil, nil)
		check(fmt.Sprintf("command line, form %d", i), err)
		_, err = ParseArgs([]string{form}, nil, nil)
		check(fmt.Sprintf("stray argument, form %d", i), err)
		runs += 3
	}
	if strings.Contains(logs.String(), planted) {
		t.Errorf("a log line repeats the secret:\n%s", logs.String())
	}
	t.Logf("%d inputs with a planted secret", runs)
}

// Redact hides quoted values that may be credentials and keeps those that help the reader.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		`got "default/ubuntu"`: `got "default/ubuntu"`,
		`got "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQ0RFRkdISUpLTE1OT1AifQ"`: `got (a value not shown: it may hold a secret)`,
		`got "token: abc"`:                                               `got (a value not shown: it may hold a secret)`,
		`got "two\nlines"`:                                               `got (a value not shown: it may hold a secret)`,
		`server https://admin:pw@192.0.2.1:6443`:                         `server https://192.0.2.1:6443`,
		`server "https://admin:pw@h:6443/x"`:                             `server "https://h:6443/x"`,
		`ethernets.PLANTEDk8sTokenQ9xw2Lr7Vb4Nc1Zt6Hy3Mp0Ks5Df8Gj.dhcp4`: `ethernets.(not shown).dhcp4`,
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
