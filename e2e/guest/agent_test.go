package guest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeAgent answers on a unix socket as qemu-ga does, after first sending a stale answer left from an earlier
// client (what guest-sync exists to skip). With silent set it reads and never answers: qemu's socket without an
// agent in the guest.
func fakeAgent(t *testing.T, silent bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "qga.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				in := bufio.NewScanner(conn)
				fmt.Fprintln(conn, `{"return": {}}`) // stale
				for in.Scan() {
					if silent {
						continue
					}
					var cmd struct {
						Execute   string
						Arguments struct{ ID int64 }
					}
					_ = json.Unmarshal(in.Bytes(), &cmd)
					switch cmd.Execute {
					case "guest-sync":
						fmt.Fprintf(conn, `{"return": %d}`+"\n", cmd.Arguments.ID)
					case "guest-get-osinfo":
						fmt.Fprintln(conn, `{"return": {"id": "debian", "name": "Debian GNU/Linux", "version-id": "12", "kernel-release": "6.1.0-28-cloud-amd64", "machine": "x86_64"}}`)
					case "guest-network-get-interfaces":
						fmt.Fprintln(conn, `{"return": [{"name": "eth0", "hardware-address": "52:54:00:00:00:01", "ip-addresses": [{"ip-address-type": "ipv4", "ip-address": "10.0.2.15", "prefix": 24}]}]}`)
					default:
						fmt.Fprintf(conn, `{"error": {"class": "CommandNotFound", "desc": "The command %s has not been found"}}`+"\n", cmd.Execute)
					}
				}
			}()
		}
	}()
	return path
}

func TestAgentSkipsStaleAnswers(t *testing.T) {
	a := agent{socket: fakeAgent(t, false)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ifaces, err := a.interfaces(ctx)
	if err != nil || len(ifaces) != 1 || ifaces[0].IPAddresses[0].Address != "10.0.2.15" || ifaces[0].MAC != "52:54:00:00:00:01" {
		t.Fatalf("interfaces: %+v %v", ifaces, err)
	}
	if info, err := a.osInfo(ctx); err != nil || info.ID != "debian" || info.VersionID != "12" || info.KernelRelease != "6.1.0-28-cloud-amd64" {
		t.Errorf("osInfo: %+v %v", info, err)
	}
	if _, err := a.info(ctx); err == nil || !strings.Contains(err.Error(), "CommandNotFound") {
		t.Errorf("an agent error must be returned as such: %v", err)
	}
}

func TestAgentAbsentTimesOut(t *testing.T) {
	a := agent{socket: fakeAgent(t, true)}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// Returning at all is the point: without the deadline the call would wait forever.
	if _, err := a.interfaces(ctx); err == nil || !strings.Contains(err.Error(), "guest-sync") {
		t.Fatalf("a silent socket must fail the sync: %v", err)
	}
}
