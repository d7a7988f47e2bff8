package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/configtest"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kubefake"
	"github.com/harvester/docker-machine-driver-harvester/harvester/preflight"
)

// secretVolumePatch is a VM patch mounting Secret name into the guest.
func secretVolumePatch(name string) string {
	return `[{"op":"add","path":"/spec/template/spec/domain/devices/disks/-","value":{"name":"peek","disk":{"bus":"virtio"}}},` +
		`{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"peek","secret":{"secretName":"` + name + `"}}}]`
}

// allowedLabel is the label an admin sets on an object a VM patch may give guests.
var allowedLabel = map[string]string{config.LabelVMPatchAllowed: "true"}

// The VM patch's check refuses each object the patch gives the guest unless an admin labelled it, naming the
// object, where the VM names it and the command that allows it; the driver's own objects (another machine's
// cloud-init Secret, with its join token and cloud-provider kubeconfig) never, whatever their labels; what does
// not exist or may not be read, too. It quotes nothing an object holds.
func TestVMPatchObjectsCheck(t *testing.T) {
	const vp = "--harvester-vm-patch: "
	another := map[string]string{config.LabelCreator: config.CreatorName, config.LabelVMName: "gc2-pool1-abcde", config.LabelVMPatchAllowed: "true"}
	tests := []struct {
		name   string
		patch  string
		seed   func(fc *fakeCluster)
		forbid string // a Secret the credential may not read
		want   string // the problem; "" for none
		detail string
	}{
		{name: "not allowed", patch: secretVolumePatch("team-creds"), seed: func(fc *fakeCluster) { fc.userSecret("team-creds", map[string]string{"token": secretToken}, nil) },
			want: vp + "gives the guest Secret team-creds (spec.template.spec.volumes[peek].secret), which no admin allowed: a patch may not bring into the guest what " +
				"the pool's editor may not read. An admin who may write it in Harvester allows it with: kubectl -n default label secret team-creds node-driver.harvesterhci.io/vm-patch-allowed=true"},
		{name: "allowed", patch: secretVolumePatch("team-creds"), seed: func(fc *fakeCluster) {
			fc.userSecret("team-creds", map[string]string{"token": secretToken}, allowedLabel)
		},
			detail: "Secret team-creds: allowed by node-driver.harvesterhci.io/vm-patch-allowed"},
		{name: "another value of the label", patch: secretVolumePatch("team-creds"),
			seed: func(fc *fakeCluster) {
				fc.userSecret("team-creds", nil, map[string]string{config.LabelVMPatchAllowed: "yes"})
			},
			want: vp + "gives the guest Secret team-creds (spec.template.spec.volumes[peek].secret), which no admin allowed"},
		{name: "another machine's cloud-init Secret, even labelled", patch: secretVolumePatch("gc2-pool1-abcde-cloudinit"),
			seed: func(fc *fakeCluster) {
				fc.userSecret("gc2-pool1-abcde-cloudinit", map[string]string{"userdata": secretToken}, another)
			},
			want: vp + "gives the guest Secret gc2-pool1-abcde-cloudinit (spec.template.spec.volumes[peek].secret), which a node driver made (a machine's cloud-init Secret, " +
				"a guest cluster's cloud-provider account): a patch may never give it to a guest; take it out of the patch"},
		{name: "absent", patch: secretVolumePatch("nope"),
			want: vp + "gives the guest Secret nope (spec.template.spec.volumes[peek].secret), which does not exist in namespace default: fix the name, or take it out of the patch"},
		{name: "forbidden", patch: secretVolumePatch("team-creds"), forbid: "team-creds", seed: func(fc *fakeCluster) { fc.userSecret("team-creds", nil, allowedLabel) },
			want: vp + "gives the guest Secret team-creds (spec.template.spec.volumes[peek].secret), which the credential may not read (403 Forbidden) to see whether an admin " +
				"allowed it: ask for a Harvester role that may get secrets in namespace default, or take it out of the patch"},
		{name: "a ConfigMap and a service account's token", patch: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"ca","configMap":{"name":"team-ca"}}},` +
			`{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"sa","serviceAccount":{"serviceAccountName":"robot"}}}]`,
			seed: func(fc *fakeCluster) {
				fc.OK(kube.Create(context.Background(), fc.C, kube.ConfigMaps, "default", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "team-ca", Namespace: "default", Labels: allowedLabel}}))
				fc.OK(kube.Create(context.Background(), fc.C, kube.ServiceAccounts, "default", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "default"}}))
			},
			want: vp + "gives the guest ServiceAccount robot (spec.template.spec.volumes[sa].serviceAccount), which no admin allowed: a patch may not bring into the guest what " +
				"the pool's editor may not read. An admin who may write it in Harvester allows it with: kubectl -n default label serviceaccount robot node-driver.harvesterhci.io/vm-patch-allowed=true"},
		{name: "an access credential", patch: `{"spec":{"template":{"spec":{"accessCredentials":[{"userPassword":{"source":{"secret":{"secretName":"pw"}},"propagationMethod":{"qemuGuestAgent":{}}}}]}}}}`,
			seed: func(fc *fakeCluster) { fc.userSecret("pw", map[string]string{"root": secretToken}, nil) },
			want: vp + "gives the guest Secret pw (spec.template.spec.accessCredentials[0].userPassword.source.secret), which no admin allowed"},
		{name: "no object", patch: `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":60}}}}`, detail: "the patch gives the guest no object of the namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeCluster(t)
			kubefake.CaptureLog(t)
			if tt.seed != nil {
				tt.seed(fc)
			}
			if tt.forbid != "" {
				fc.Dyn.PrependReactor("get", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.(k8stesting.GetAction).GetName() != tt.forbid {
						return false, nil, nil
					}
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, tt.forbid, errors.New("user cannot get secrets"))
				})
			}
			d := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagVMPatch, tt.patch))
			c := checkNamed(t, d, preflight.CheckVMPatchObjects)
			var lines []string
			for _, p := range c.Problems {
				lines = append(lines, p.String())
			}
			got := strings.Join(lines, "\n")
			switch {
			case tt.want == "" && (got != "" || c.Detail != tt.detail):
				t.Errorf("problems %q, detail %q; want none and %q", got, c.Detail, tt.detail)
			case tt.want != "" && (len(lines) != 1 || !strings.HasPrefix(got, tt.want)):
				t.Errorf("problems:\n%s\nwant one, beginning\n%s", got, tt.want)
			}
			if strings.Contains(got, "PLANTED") {
				t.Errorf("a problem quotes what an object holds:\n%s", got)
			}
		})
	}
}

// A create refuses, before it makes anything, a patch that gives the guest an object no admin allowedLabel, one no
// pre-flight of its process read. With the label it creates the VM with the volume.
func TestCreateRefusesAPatchObjectNotAllowed(t *testing.T) {
	fc := newFakeCluster(t)
	fc.kubeVirt(healthy("10.0.0.5"))
	kubefake.CaptureLog(t)
	fc.userSecret("team-creds", map[string]string{"token": secretToken}, nil)
	err := newTestDriver(t, fc, "m1", configtest.With(createOptions(), config.FlagVMPatch, secretVolumePatch("team-creds"))).Create()
	configtest.WantAll(t, errString(err), "cannot create the machine on Harvester: --harvester-vm-patch: gives the guest Secret team-creds (spec.template.spec.volumes[peek].secret), which no admin allowed")
	ctx := context.Background()
	if _, err := kube.Get(ctx, fc.C, kube.Secrets, "default", "m1-cloudinit"); !kube.IsGone(err, "secrets", "m1-cloudinit") {
		t.Errorf("a refused create made its Secret: %v", err)
	}
	if _, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m1", metav1.GetOptions{}); err == nil {
		t.Error("a refused create made its VM")
	}

	fc.userSecret("ok-creds", nil, allowedLabel)
	d := newTestDriver(t, fc, "m3", configtest.With(createOptions(), config.FlagVMPatch, secretVolumePatch("ok-creds")))
	if err := d.PreCreateCheck(); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(); err != nil {
		t.Fatalf("Create with an allowed Secret: %v", err)
	}
	vm, err := fc.KV.KubevirtV1().VirtualMachines("default").Get(ctx, "m3", metav1.GetOptions{})
	if err != nil || vm.Spec.Template.Spec.Volumes[len(vm.Spec.Template.Spec.Volumes)-1].Secret.SecretName != "ok-creds" {
		t.Errorf("the VM with the allowed Secret: %v", err)
	}
}
