package doccheck

import (
	"reflect"
	"testing"
)

// The anchors are GitHub's: the README's old links into its own headings are of this form.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Replace the built-in driver: a derived Rancher image":  "replace-the-built-in-driver-a-derived-rancher-image",
		"Options in Rancher: HarvesterConfig fields":            "options-in-rancher-harvesterconfig-fields",
		"The Helm chart and the UI extension (forms for hcivm)": "the-helm-chart-and-the-ui-extension-forms-for-hcivm",
		"Validate a node template (`check`)":                    "validate-a-node-template-check",
		"What the driver trusts, and why":                       "what-the-driver-trusts-and-why",
		"[Link](x.md) and <b>bold</b> — dash":                   "link-and-bold--dash",
		"Host devices, labels & strategies":                     "host-devices-labels--strategies",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestAnchorsAndLinks(t *testing.T) {
	md := "# Title\n\nSee [a](other.md#x), ![pic](pic.png) and `[not](a-link.md)`.\n\n" +
		"```sh\n# not a heading\n[nor](this.md)\n```\n\n## Title\n\n<a id=\"explicit\"></a>Text.\n\n[ref]: ref.md\n"
	if got, want := Anchors(md), map[string]bool{"title": true, "title-1": true, "explicit": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
	if got, want := Links(md), []Link{{"other.md#x", 3}, {"pic.png", 3}, {"ref.md", 14}}; !reflect.DeepEqual(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
}
