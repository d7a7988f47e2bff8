// The form refuses what the driver refuses of the EFI state and the I/O threads (harvester/config validate.go
// persistentEFINeedsEFI, parse_diskio.go parseDiskIO), before a pool is saved that no machine could be made of.
import { validate } from '../../pkg/hcivm/lib/validate';

const base = {
  clusterName: 'c1', cpuCount: '2', memorySize: '4', vmNamespace: 'default', sshUser: 'ubuntu',
  imageName: 'default/noble', diskSize: '40', networkName: 'default/vlan1',
};
const keys = (value) => validate({ ...base, ...value }).map((p) => `${ p.field } ${ p.key.replace('hcivm.machineConfig.errors.', '') }`);

describe('the EFI state and the I/O threads', () => {
  it('are taken as the driver takes them', () => {
    for (const value of [{}, { enableEfi: true, persistentEfi: true }, { ioThreadsPolicy: 'shared' }, { ioThreadsPolicy: 'auto', ioThreadCount: '0' },
      { ioThreadsPolicy: 'supplementalPool', ioThreadCount: '4' }, { ioThreadCount: '' }, { blockMultiQueue: true }]) {
      expect(keys(value)).toEqual([]);
    }
  });

  it('are refused where the driver refuses them, each under its field', () => {
    expect(keys({ persistentEfi: true })).toEqual(['persistentEfi persistentEfiNeedsEfi']);
    expect(keys({ ioThreadsPolicy: 'auto', ioThreadCount: '2' })).toEqual(['ioThreadCount ioThreadCountNeedsPool']);
    expect(keys({ ioThreadCount: '2' })).toEqual(['ioThreadCount ioThreadCountNeedsPool']);
    expect(keys({ ioThreadsPolicy: 'supplementalPool' })).toEqual(['ioThreadCount poolNeedsIoThreadCount']);
    expect(keys({ ioThreadsPolicy: 'supplementalPool', ioThreadCount: '0' })).toEqual(['ioThreadCount poolNeedsIoThreadCount']);
    expect(keys({ ioThreadsPolicy: 'supplementalPool', ioThreadCount: 'four' })).toEqual(['ioThreadCount ioThreadCount']);
    expect(keys({ ioThreadsPolicy: 'supplementalPool', ioThreadCount: '-1' })).toEqual(['ioThreadCount ioThreadCount']);
  });
});
