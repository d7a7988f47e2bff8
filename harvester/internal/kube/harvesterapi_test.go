package kube

import (
	"encoding/json"
	"testing"

	harvesterv1 "github.com/harvester/harvester/pkg/apis/harvesterhci.io/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The driver reads Harvester's resources into its own small mirrors (harvesterapi.go) to keep Harvester's
// package out of the plugin. This test keeps them honest: objects built with Harvester's real v1beta1 types read
// back through the mirrors with every field the driver uses, and the condition names are Harvester's.
func TestHarvesterMirrorsMatch(t *testing.T) {
	img := harvesterv1.VirtualMachineImage{
		ObjectMeta: metav1.ObjectMeta{Name: "ubuntu", Namespace: "default", Labels: map[string]string{LabelImageType: "raw_qcow2"}},
		Spec:       harvesterv1.VirtualMachineImageSpec{DisplayName: "ubuntu.qcow2", URL: "http://mirror/ubuntu.img"},
		Status: harvesterv1.VirtualMachineImageStatus{AppliedURL: "http://mirror/ubuntu.img", Progress: 100, StorageClassName: "longhorn-ubuntu",
			Conditions: []harvesterv1.Condition{{Type: harvesterv1.ImageImported, Status: corev1.ConditionTrue, Reason: "r", Message: "m"}}},
	}
	var mirror VirtualMachineImage
	roundTrip(t, img, &mirror)
	if mirror.Name != "ubuntu" || mirror.Labels[LabelImageType] != "raw_qcow2" || mirror.Spec.DisplayName != img.Spec.DisplayName ||
		mirror.Spec.URL != img.Spec.URL || mirror.Status.AppliedURL != img.Status.AppliedURL || mirror.Status.Progress != 100 ||
		mirror.Status.StorageClassName != "longhorn-ubuntu" || len(mirror.Status.Conditions) != 1 ||
		mirror.Status.Conditions[0] != (Condition{Type: ConditionImported, Status: corev1.ConditionTrue, Reason: "r", Message: "m"}) {
		t.Errorf("image mirror lost fields: %+v", mirror)
	}

	kp := harvesterv1.KeyPair{
		ObjectMeta: metav1.ObjectMeta{Name: "mykey", Namespace: "default"},
		Spec:       harvesterv1.KeyPairSpec{PublicKey: "ssh-ed25519 AAAA"},
		Status:     harvesterv1.KeyPairStatus{FingerPrint: "fp", Conditions: []harvesterv1.Condition{{Type: harvesterv1.KeyPairValidated, Status: corev1.ConditionTrue}}},
	}
	var kpMirror KeyPair
	roundTrip(t, kp, &kpMirror)
	if kpMirror.Spec.PublicKey != kp.Spec.PublicKey || kpMirror.Status.FingerPrint != "fp" || !ConditionTrue(kpMirror.Status.Conditions, ConditionValidated) {
		t.Errorf("key pair mirror lost fields: %+v", kpMirror)
	}

	for mine, theirs := range map[string]string{
		ConditionImported:           string(harvesterv1.ImageImported),
		ConditionRetryLimitExceeded: string(harvesterv1.ImageRetryLimitExceeded),
		ConditionValidated:          string(harvesterv1.KeyPairValidated),
	} {
		if mine != theirs {
			t.Errorf("condition %q is %q in Harvester", mine, theirs)
		}
	}
	if HarvesterGroupVersion != harvesterv1.SchemeGroupVersion {
		t.Errorf("group version %v, Harvester's is %v", HarvesterGroupVersion, harvesterv1.SchemeGroupVersion)
	}
}

func roundTrip(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}
