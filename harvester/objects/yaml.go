package objects

import (
	"bytes"

	"sigs.k8s.io/yaml"
)

// toYAML renders API objects as one YAML stream, each document as the API server would store it.
func toYAML(objs ...any) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}
