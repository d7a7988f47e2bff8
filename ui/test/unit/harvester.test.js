import { capacities } from '../../pkg/hcivm/lib/harvester';

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
    expect(capacities(h).host).toEqual({ [A10]: 0 });
    expect(capacities({ ...h, vmis: h.vmis.slice(2) }).host).toEqual({ [A10]: 2 });
  });

  it('counts only the hosts in the machine\'s zones and regions', () => {
    const at = (n, zone, region) => ({
      ...n, metadata: { ...n.metadata, labels: { 'topology.kubernetes.io/zone': zone, 'topology.kubernetes.io/region': region } },
    });
    const h = { ...enabled, vmis: [], nodes: [at(node('h1', 1), 'a', 'eu'), at(node('h2', 2), 'b', 'eu'), at(node('h3', 4), 'c', 'us')] };

    expect(capacities(h).host).toEqual({ [A10]: 7 });
    expect(capacities(h, { zone: 'a, b' }).host).toEqual({ [A10]: 3 });
    expect(capacities(h, { region: 'us' }).host).toEqual({ [A10]: 4 });
    expect(capacities(h, { zone: 'a,c', region: 'eu' }).host).toEqual({ [A10]: 1 });
  });

  it('does not know the count when the hosts or the VMIs could not be read', () => {
    expect(capacities({ ...enabled, unavailable: ['vmis'] }).host).toEqual({ [A10]: null });
    expect(capacities({ ...enabled, unavailable: ['nodes'] }).host).toEqual({ [A10]: null });
  });
});
