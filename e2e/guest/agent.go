package guest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"
)

// Interface is one network interface as qemu-guest-agent's guest-network-get-interfaces reports it.
type Interface struct {
	Name        string      `json:"name"`
	MAC         string      `json:"hardware-address"`
	IPAddresses []IPAddress `json:"ip-addresses"`
}

// IPAddress is one address of an Interface.
type IPAddress struct {
	Type    string `json:"ip-address-type"` // "ipv4" or "ipv6"
	Address string `json:"ip-address"`
	Prefix  int    `json:"prefix"`
}

// Info is what guest-info reports.
type Info struct {
	Version string `json:"version"`
}

// OSInfo is what guest-get-osinfo reports (os-release and uname, read inside the guest).
type OSInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	PrettyName    string `json:"pretty-name"`
	Version       string `json:"version"`
	VersionID     string `json:"version-id"`
	KernelRelease string `json:"kernel-release"`
	KernelVersion string `json:"kernel-version"`
	Machine       string `json:"machine"`
}

// agent speaks qemu-guest-agent's protocol (JSON commands over the virtio-serial port, exposed by qemu as a unix
// socket) the way virt-handler does: guest-sync first, so answers to earlier commands that arrive late are skipped.
// Without an agent in the guest, qemu still accepts the connection and nothing ever answers: every call has a
// deadline.
type agent struct {
	socket string
}

// call sends one command and decodes its "return" into out. It reconnects per call: qemu's socket chardev takes
// one client at a time and nothing is kept open across the guest's reboots.
func (a agent) call(ctx context.Context, command string, out any) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", a.socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(2 * time.Second)
	}
	_ = conn.SetDeadline(deadline)
	dec := json.NewDecoder(bufio.NewReader(conn))
	id := rand.Int64N(1 << 40)
	if err := send(conn, "guest-sync", map[string]int64{"id": id}); err != nil {
		return err
	}
	for { // skip stale answers until the sync id comes back
		var r struct {
			Return json.RawMessage `json:"return"`
		}
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("guest-sync: %w", err)
		}
		var got int64
		if json.Unmarshal(r.Return, &got) == nil && got == id {
			break
		}
	}
	if err := send(conn, command, nil); err != nil {
		return err
	}
	var r struct {
		Return json.RawMessage `json:"return"`
		Error  *struct {
			Class, Desc string
		} `json:"error"`
	}
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: %s: %s", command, r.Error.Class, r.Error.Desc)
	}
	if r.Return == nil {
		return errors.New(command + ": no return value")
	}
	return json.Unmarshal(r.Return, out)
}

func send(conn net.Conn, command string, args any) error {
	msg := map[string]any{"execute": command}
	if args != nil {
		msg["arguments"] = args
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = conn.Write(append(b, '\n'))
	return err
}

// interfaces asks the agent for the guest's interfaces.
func (a agent) interfaces(ctx context.Context) ([]Interface, error) {
	var out []Interface
	return out, a.call(ctx, "guest-network-get-interfaces", &out)
}

// info asks the agent for its version.
func (a agent) info(ctx context.Context) (Info, error) {
	var out Info
	return out, a.call(ctx, "guest-info", &out)
}

// osInfo asks the agent which operating system runs.
func (a agent) osInfo(ctx context.Context) (OSInfo, error) {
	var out OSInfo
	return out, a.call(ctx, "guest-get-osinfo", &out)
}
