package scenarios

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/harvester/docker-machine-driver-harvester/e2e/testbed"
	"github.com/harvester/docker-machine-driver-harvester/harvester"
	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
)

// poolMachines is machines of one configuration with a static address pool, made through the driver on the test
// bed: their VMs in vmNS, the pool's network in netNS.
type poolMachines struct {
	t           *testing.T
	b           *testbed.Bed
	vmNS, netNS string
	prefix      string
	opts        config.Options
	drivers     []*harvester.Driver
}

// createPoolMachines makes n machines named prefix-NN on network netNS/network, with the pool flags in pool, all
// at once: each runs its pre-flight, then its create; a failure of either is the test's.
func createPoolMachines(t *testing.T, b *testbed.Bed, vmNS, netNS, network, prefix string, n int, pool map[string]any) *poolMachines {
	t.Helper()
	opts := config.DefaultOptions()
	for k, v := range map[string]any{
		config.FlagKubeconfigContent: string(b.AdminKubeconfig()), config.FlagVMNamespace: vmNS,
		config.FlagImageName: "default/ubuntu-22.04", config.FlagDiskSize: 10, config.FlagNetworkName: netNS + "/" + network,
		config.FlagCreateTimeout: "300",
	} {
		opts[k] = v
	}
	for k, v := range pool {
		opts[k] = v
	}
	m := &poolMachines{t: t, b: b, vmNS: vmNS, netNS: netNS, prefix: prefix, opts: opts, drivers: make([]*harvester.Driver, n)}
	for i := range m.drivers {
		m.drivers[i] = m.driver(i)
	}
	eachDriver(m.drivers, func(i int, d *harvester.Driver) {
		if err := d.PreCreateCheck(); err != nil {
			t.Errorf("machine %d: pre-flight: %v", i, err)
			return
		}
		if err := d.Create(); err != nil {
			t.Errorf("machine %d: %v", i, err)
		}
	})
	return m
}

// driver is machine i's driver, configured but not created.
func (m *poolMachines) driver(i int) *harvester.Driver {
	m.t.Helper()
	d := harvester.NewDriver(fmt.Sprintf("%s-%02d", m.prefix, i), m.t.TempDir())
	if err := d.SetConfigFromFlags(m.opts); err != nil {
		m.t.Fatal(err)
	}
	return d
}

// refusedOneMore checks that one machine more than the pool holds is refused, by its pre-flight and by its
// create, with exhausted in the error, and makes no VM.
func (m *poolMachines) refusedOneMore(exhausted string) {
	m.t.Helper()
	n := len(m.drivers)
	last := m.driver(n)
	for step, run := range map[string]func() error{"pre-flight": last.PreCreateCheck, "create": last.Create} {
		if err := run(); err == nil || !strings.Contains(err.Error(), exhausted) {
			m.t.Errorf("machine %d's %s: %v", n+1, step, err)
		}
	}
	if _, err := m.b.Virt.KubevirtV1().VirtualMachines(m.vmNS).Get(context.Background(), last.MachineName, metav1.GetOptions{}); err == nil {
		m.t.Errorf("the refused create made a VM")
	}
}

// removeAll removes every machine at once and checks that no allocation and nothing of theirs is left.
func (m *poolMachines) removeAll() {
	m.t.Helper()
	eachDriver(m.drivers, func(i int, d *harvester.Driver) {
		if err := d.Remove(); err != nil {
			m.t.Errorf("machine %d: remove: %v", i, err)
		}
	})
	if cms := ipAllocations(m.t, m.b, m.netNS); len(cms) != 0 {
		m.t.Errorf("allocations left after removing every machine: %v", cms)
	}
	nothingLeft(m.t, m.b, m.vmNS)
}
