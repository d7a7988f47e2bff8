// The pool's autoscaling annotations: the form writes them into the pool as the cluster page holds it — rke2.vue's
// machinePools[i] = {id, config, pool, create, …}, whose pool (name, roles, labels, taints, autoscalingMinSize,
// autoscalingMaxSize, machineDeploymentAnnotations) the page saves into spec.rkeConfig.machinePools
// (rancher/dashboard shell/edit/provisioning.cattle.io.cluster/rke2.vue initMachinePools, addMachinePool,
// saveMachinePools: finalPools.push(entry.pool); the pool's autoscaling fields as tabs/MachinePool.vue sets them,
// isAutoscalerEnabled: both or neither; v2.13.0 to v2.15.0).
import * as rancher from '../fixtures/rancher';
import { mountMachineConfig, text } from './helpers';
import { applyAutoscaling, capacityOf, PREFIX } from '../../pkg/hcivm/lib/autoscaling';

const CPU = `${ PREFIX }cpu`;
const MEMORY = `${ PREFIX }memory`;

// workerPool is an autoscaling worker pool from zero, as MachinePool.vue leaves it when autoscaling is turned on
// and its minimum set to 0.
function workerPool(config) {
  const p = rancher.pool('gpu', 0, config, true);

  Object.assign(p.pool, {
    etcdRole: false, controlPlaneRole: false, workerRole: true, autoscalingMinSize: 0, autoscalingMaxSize: 5,
    labels: { team: 'ml', 'not a label': 'x' }, taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
    machineDeploymentAnnotations: { 'example.com/owner': 'ml' },
  });

  return p;
}

// The harvester cloud provider, as the cluster's basics set it into the selector-less machineSelectorConfig entry.
function harvesterCluster() {
  const c = rancher.newCluster('mycluster');

  c.spec.rkeConfig.machineSelectorConfig[0].config['cloud-provider-name'] = 'harvester';

  return c;
}

describe('the autoscaling annotations of a pool', () => {
  it('are computed from the form as the driver computes them', () => {
    const config = {
      ...rancher.savedConfig(), cpuCount: '8', memorySize: '32', reservedMemorySize: '512', zone: 'zone-a'
    };
    const pool = workerPool(config).pool;

    expect(capacityOf(config, pool, harvesterCluster())).toEqual({
      [CPU]:                        '8',
      [MEMORY]:                     '32256Mi',
      [`${ PREFIX }ephemeral-disk`]: '40Gi',
      [`${ PREFIX }gpu-count`]:      '1',
      [`${ PREFIX }gpu-type`]:       'nvidia.com/gpu',
      [`${ PREFIX }labels`]:         'failure-domain.beta.kubernetes.io/zone=zone-a,node-role.kubernetes.io/worker=true,team=ml,topology.kubernetes.io/zone=zone-a',
      [`${ PREFIX }taints`]:         'gpu=true:NoSchedule',
    });
    // Without the reserved memory, 100Mi less; no zone without Harvester's cloud provider; a CD-ROM boot has no
    // root disk to tell.
    const other = capacityOf({
      ...config, reservedMemorySize: '-1', diskInfo: '{"disks":[{"imageName":"default/iso","size":5,"type":"cd-rom","bootOrder":1}]}'
    }, pool, rancher.newCluster());

    expect(other[MEMORY]).toBe('32668Mi');
    expect(other[`${ PREFIX }labels`]).toBe('node-role.kubernetes.io/worker=true,team=ml');
    expect(other[`${ PREFIX }ephemeral-disk`]).toBeUndefined();
  });

  it('are set on a pool that autoscales, follow the machine config, and say so', async() => {
    const config = { ...rancher.savedConfig() };
    const pools = [rancher.pool('pool1', 1, {}), workerPool(config)];
    const { wrapper, value, machinePools } = await mountMachineConfig({
      cluster: harvesterCluster(), pools, poolIndex: 1, config
    });
    const annotations = () => machinePools[1].pool.machineDeploymentAnnotations;

    expect(annotations()).toMatchObject({ 'example.com/owner': 'ml', [CPU]: '4', [MEMORY]: '8092Mi' });
    expect(text(wrapper)).toContain("Autoscaling from zero: this pool's machineDeploymentAnnotations are set from this form");
    // The size changes: the annotations follow.
    value.cpuCount = '16';
    value.memorySize = '64';
    await wrapper.vm.$nextTick();
    expect(annotations()).toMatchObject({ [CPU]: '16', [MEMORY]: '65436Mi' });
    // The pool stops autoscaling (MachinePool.vue deletes both bounds): what the form set goes, the pool's own stays.
    delete machinePools[1].pool.autoscalingMinSize;
    delete machinePools[1].pool.autoscalingMaxSize;
    await wrapper.vm.$nextTick();
    expect(annotations()).toEqual({ 'example.com/owner': 'ml' });
    expect(text(wrapper)).not.toContain('Autoscaling from zero');
  });

  it('are never set on a pool that does not autoscale', async() => {
    const config = { ...rancher.savedConfig() };
    const { wrapper, value, machinePools } = await mountMachineConfig({ cluster: harvesterCluster(), config });

    value.cpuCount = '16';
    await wrapper.vm.$nextTick();
    expect(machinePools[0].pool.machineDeploymentAnnotations).toBeUndefined();
    expect(text(wrapper)).not.toContain('Autoscaling from zero');
  });

  it('replace the pool\'s own capacity annotations but a GPU count of passed-through devices', () => {
    const config = { ...rancher.savedConfig(), vgpuInfo: '', hostDeviceInfo: '{"hostDevices":[{"name":"pci1","deviceName":"nvidia.com/GA102GL_A10"}]}' };
    const pool = workerPool(config).pool;

    pool.machineDeploymentAnnotations = { [CPU]: '2', [`${ PREFIX }gpu-count`]: '1', [`${ PREFIX }gpu-type`]: 'nvidia.com/gpu' };
    const set = applyAutoscaling(pool, config, harvesterCluster());

    expect(pool.machineDeploymentAnnotations).toMatchObject({ [CPU]: '4', [`${ PREFIX }gpu-count`]: '1', [`${ PREFIX }gpu-type`]: 'nvidia.com/gpu' });
    expect(set[`${ PREFIX }gpu-count`]).toBeUndefined();
  });
});
