package cloudinit

import (
	"go.yaml.in/yaml/v3"

	"github.com/harvester/docker-machine-driver-harvester/cloudinit/internal/yamlnode"
)

// WriteFilesConfig renders a cloud-config that only writes files: a snippet to paste into user data by hand
// (the cloud-provider-config subcommand prints one). Files are rendered as in UserData's write_files.
func WriteFilesConfig(files []File) ([]byte, error) {
	node, err := writeFiles(files)
	if err != nil {
		return nil, err
	}
	doc := yamlnode.Map()
	if node != nil {
		yamlnode.Set(doc, "write_files", node)
	}
	body, err := encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}})
	if err != nil {
		return nil, err
	}
	return append([]byte("#cloud-config\n"), body...), nil
}
