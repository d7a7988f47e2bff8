import { capacities } from '../../pkg/hcivm/lib/harvester';

const free = (h, v) => Object.fromEntries(Object.entries(capacities(h, v).host).map(([k, x]) => [k, x.free]));

const A10 = 'nvidia.com/GA102GL_A10';
const node = (name, count, unschedulable = false) => ({
  metadata: { name }, spec: { unschedulable }, status: { allocatable: { [A10]: String(count) } },
});
const vmi = (name, phase, nodeName, devices) => ({
  metadata: { namespace: 'default', name }, status: { phase, nodeName }, spec: { domain: { devices } },
});
const enabled = {
  pciDevices: [{ metadata: { name: 'h1-1' }, status: { resourceName: A10 } }],
  pciClaims:  [{ metadata: { name: 'h1-1' } }],
};

describe('capacities of host devices', () => {
  it('counts the schedulable hosts\' allocatable devices less those running or waiting VMIs hold', () => {
    const h = {
      ...enabled,
      nodes: [node('h1', 2), node('h2', 1), node('h3', 4, true)],
      vmis:  [
        vmi('a', 'Running', 'h1', { hostDevices: [{ deviceName: A10 }] }),
        vmi('b', 'Running', 'h2', { gpus: [{ deviceName: A10 }, { deviceName: A10 }] }), // h2 over-held: 0, not -1
        vmi('c', 'Succeeded', 'h1', { hostDevices: [{ deviceName: A10 }] }),
        vmi('d', 'Failed', 'h1', { hostDevices: [{ deviceName: A10 }] }),
        vmi('e', 'Pending', '', { hostDevices: [{ deviceName: A10 }] }),
      ],
    };

    // h1: 2 - 1; h2: max(0, 1 - 2); h3 cordoned; less 1 waiting.
    expect(free(h)).toEqual({ [A10]: 0 });
    expect(free({ ...h, vmis: h.vmis.slice(2) })).toEqual({ [A10]: 2 });
  });

  it('counts only the hosts in the machine\'s zones and regions', () => {
    const at = (n, zone, region) => ({
      ...n, metadata: { ...n.metadata, labels: { 'topology.kubernetes.io/zone': zone, 'topology.kubernetes.io/region': region } },
    });
    const h = { ...enabled, vmis: [], nodes: [at(node('h1', 1), 'a', 'eu'), at(node('h2', 2), 'b', 'eu'), at(node('h3', 4), 'c', 'us')] };

    expect(free(h)).toEqual({ [A10]: 7 });
    expect(free(h, { zone: 'a, b' })).toEqual({ [A10]: 3 });
    expect(free(h, { region: 'us' })).toEqual({ [A10]: 4 });
    expect(free(h, { zone: 'a,c', region: 'eu' })).toEqual({ [A10]: 1 });
  });

  it('does not know the count when the hosts or the VMIs could not be read', () => {
    expect(free({ ...enabled, unavailable: ['vmis'] })).toEqual({ [A10]: null });
    expect(free({ ...enabled, unavailable: ['nodes'] })).toEqual({ [A10]: null });
  });

  it('counts USB devices whose passthrough is enabled, beside PCI devices with a claim', () => {
    const usb = (name, resourceName, enabled) => ({ metadata: { name }, status: { resourceName, enabled } });
    const h = {
      ...enabled, vmis: [], nodes: [{ metadata: { name: 'h1' }, status: { allocatable: { 'kubevirt.io/token': '1', [A10]: '1' } } }],
      usbDevices: [usb('h1-1-2', 'kubevirt.io/token', true), usb('h1-1-3', 'kubevirt.io/disk', false)],
    };

    expect(capacities(h).host).toEqual({ [A10]: { kind: 'pci', free: 1 }, 'kubevirt.io/token': { kind: 'usb', free: 1 } });
  });
});
