package preflight

import (
	"testing"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

func TestIsISO(t *testing.T) {
	img := func(f func(*kube.VirtualMachineImage)) *kube.VirtualMachineImage {
		i := &kube.VirtualMachineImage{}
		f(i)
		return i
	}
	tests := []struct {
		name string
		img  *kube.VirtualMachineImage
		want bool
	}{
		{"label iso", img(func(i *kube.VirtualMachineImage) { i.Labels = map[string]string{kube.LabelImageType: "iso"} }), true},
		{"label wins over the name", img(func(i *kube.VirtualMachineImage) {
			i.Labels = map[string]string{kube.LabelImageType: "raw_qcow2"}
			i.Spec.DisplayName = "weird.iso"
		}), false},
		{"signed download link", img(func(i *kube.VirtualMachineImage) { i.Spec.URL = "https://mirror/leap.iso?X-Amz-Signature=abc" }), true},
		{"uploaded file", img(func(i *kube.VirtualMachineImage) {
			i.Annotations = map[string]string{kube.AnnotationUploadedImageName: "Win11.ISO"}
		}), true},
		{"cloud image", img(func(i *kube.VirtualMachineImage) {
			i.Spec.URL = "https://cloud-images/jammy.img"
			i.Spec.DisplayName = "jammy"
		}), false},
	}
	for _, tt := range tests {
		if got := isISO(tt.img); got != tt.want {
			t.Errorf("%s: isISO = %v, want %v", tt.name, got, tt.want)
		}
	}
}
