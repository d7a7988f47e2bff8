package guest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// qmp runs one QEMU Machine Protocol command on the socket at path: read the greeting, negotiate capabilities,
// execute, read the answer (events in between are skipped).
func qmp(path, command string) error {
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	dec := json.NewDecoder(bufio.NewReader(conn))
	var greeting map[string]any
	if err := dec.Decode(&greeting); err != nil {
		return fmt.Errorf("qmp greeting: %w", err)
	}
	for _, cmd := range []string{"qmp_capabilities", command} {
		if _, err := fmt.Fprintf(conn, "{\"execute\":%q}\n", cmd); err != nil {
			return err
		}
		for {
			var r struct {
				Return json.RawMessage               `json:"return"`
				Error  *struct{ Class, Desc string } `json:"error"`
				Event  string                        `json:"event"`
			}
			if err := dec.Decode(&r); err != nil {
				return fmt.Errorf("qmp %s: %w", cmd, err)
			}
			if r.Event != "" {
				continue
			}
			if r.Error != nil {
				return fmt.Errorf("qmp %s: %s: %s", cmd, r.Error.Class, r.Error.Desc)
			}
			break
		}
	}
	return nil
}
