package guest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"time"

	"golang.org/x/crypto/ssh"
)

// Shell is an SSH session factory for one guest, logged in with a private key (the one the driver generated).
type Shell struct {
	client *ssh.Client
}

// DialSSH connects to addr (the forwarded 127.0.0.1:port) as user with the PEM private key, retrying until ctx
// ends: sshd starts late in a guest's boot. Host keys are not checked: the guest made them a minute ago.
func DialSSH(ctx context.Context, addr, user string, privateKeyPEM []byte) (*Shell, error) {
	signer, err := ssh.ParsePrivateKey(privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("ssh key: %w", err)
	}
	cfg := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second}
	var last error
	for {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			c, chans, reqs, herr := ssh.NewClientConn(conn, addr, cfg)
			if herr == nil {
				_ = conn.SetDeadline(time.Time{})
				return &Shell{client: ssh.NewClient(c, chans, reqs)}, nil
			}
			conn.Close()
			err = herr
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ssh %s@%s: %v (last error: %v)", user, addr, ctx.Err(), last)
		case <-time.After(2 * time.Second):
		}
	}
}

// Run runs a shell command and returns its standard output; a non-zero exit is an error carrying its stderr. A
// command that has no answer within BootBudget (a guest that stopped or hangs: x/crypto/ssh waits for a channel's
// answer without a limit) closes the connection and is an error, so no test waits past its own bounds.
func (s *Shell) Run(command string) (string, error) {
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := s.run(command)
		done <- result{out, err}
	}()
	budget := BootBudget()
	limit := time.NewTimer(budget)
	defer limit.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-limit.C:
		s.client.Close() // ends the session's reads, and the goroutine with them
		return "", fmt.Errorf("%q: no answer from the guest within %v; the connection is closed", command, budget)
	}
}

func (s *Shell) run(command string) (string, error) {
	sess, err := s.client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	if err := sess.Run(command); err != nil {
		return stdout.String(), fmt.Errorf("%q: %v: %s", command, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}

// Close ends the connection.
func (s *Shell) Close() error { return s.client.Close() }
