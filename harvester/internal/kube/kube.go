// Package kube is the driver's client layer: the only code that talks to Harvester's API server. It holds the
// clients (a REST client of its own for VMs and VMIs that sends the requests of KubeVirt's generated client,
// kubevirt.go; the dynamic client viewed through typed resources for everything else), the mirrors of Harvester's
// own types, the wording of API failures, the informer-based wait on a machine's VM and VMI, the wait on a Secret,
// and the access reviews. It decides nothing about machines: package harvester, harvester/ippool and
// harvester/guestaccount do, through Interface, which tests back with client-go's fakes
// (harvester/internal/kubefake); harvester/connection makes the Client from a credential.
package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Interface is what the driver asks of Harvester's API.
type Interface interface {
	// Server is the API server's host (and path), named in messages.
	Server() string
	// Explain words a failed call for a Rancher user (see Client.Explain).
	Explain(action, object string, err error) error

	// VirtualMachines and VirtualMachineInstances are the clients of the namespace's VMs and VMIs (kubevirt.go).
	KubevirtInterface
	// Dynamic is the client behind the typed resources (Secrets, Images, … in resources.go).
	Dynamic() dynamic.Interface

	// Denied returns what of needed the credential may not do in namespace.
	Denied(ctx context.Context, namespace string, needed []Access) ([]Access, error)
	// WatchMachine follows the VM and the VMI named name until check is done (see Client.WatchMachine).
	WatchMachine(ctx context.Context, namespace, name string, recheck time.Duration, check MachineCheck) (Machine, error)
	// WatchVM follows the VM named name alone until check is done (see Client.WatchVM).
	WatchVM(ctx context.Context, namespace, name string, check MachineCheck) (Machine, error)
	// WaitForSecret waits until the Secret named name exists and satisfies done (see Client.WaitForSecret).
	WaitForSecret(ctx context.Context, namespace, name string, done func(*corev1.Secret) bool) (*corev1.Secret, error)

	// Screen withholds the secrets it holds from everything the cluster says through this client (screen.go):
	// the driver holds each secret there as it learns it.
	Screen() *Screen
}

// Machine is what is known of a machine at one moment: its VM and VMI, nil when absent.
type Machine struct {
	VM  *kubevirtv1.VirtualMachine
	VMI *kubevirtv1.VirtualMachineInstance
}

// MachineCheck looks at the latest Machine and says whether the wait is over, or why it failed.
type MachineCheck func(Machine) (done bool, err error)

// Client is Interface over client-go.
type Client struct {
	kubevirt KubevirtInterface
	dynamic  dynamic.Interface
	screen   *Screen
	server   string
	renew    string // how to give a current credential, said when the API server rejects this one
}

var _ Interface = (*Client)(nil)

// New returns a client over the given clients (tests pass client-go's fakes), whose answers pass its Screen
// before anyone reads them (screen_client.go). server names the API server in messages; renew tells a user whose
// credential was rejected how to give a current one.
func New(kubevirt KubevirtInterface, dyn dynamic.Interface, server, renew string) *Client {
	s := NewScreen()
	return &Client{kubevirt: screenedKubevirt{kubevirt, s}, dynamic: screenedDynamic{dyn, s}, screen: s, server: server, renew: renew}
}

// NewForConfig returns a client for cfg. Both clients share one HTTP client and so one connection pool, whose
// responses are read within a budget (BoundResponses) and which follows no redirect (clientFor). It is the only
// place the driver makes an HTTP client (TestOneHTTPClientConstructor).
func NewForConfig(cfg *rest.Config, renew string) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(BoundResponses)
	server := serverOf(cfg)
	httpClient, err := clientFor(cfg, server)
	if err != nil {
		return nil, fmt.Errorf("the Harvester kubeconfig is not usable: %v", err)
	}
	kv, err := newKubevirtClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return New(kv, dyn, server, renew), nil
}

// serverOf is how messages name cfg's API server: its host and path, without scheme, user or query.
func serverOf(cfg *rest.Config) string {
	if u, err := url.Parse(cfg.Host); err == nil && u.Host != "" {
		return u.Host + u.Path
	}
	return cfg.Host
}

// HTTPClient is an HTTP client for cfg's server with cfg's credential and TLS settings, as NewForConfig's: every
// answer bounded (BoundResponses) and no redirect followed (clientFor). The driver's reads of Rancher's own API
// (ReadRancherToken, ReadCAPICluster) go through it.
func HTTPClient(cfg *rest.Config) (*http.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(BoundResponses)
	return clientFor(cfg, serverOf(cfg))
}

func (c *Client) Server() string { return c.server }

func (c *Client) VirtualMachines(namespace string) VirtualMachineInterface {
	return c.kubevirt.VirtualMachines(namespace)
}

func (c *Client) VirtualMachineInstances(namespace string) VirtualMachineInstanceInterface {
	return c.kubevirt.VirtualMachineInstances(namespace)
}

func (c *Client) Dynamic() dynamic.Interface { return c.dynamic }

func (c *Client) Screen() *Screen { return c.screen }
