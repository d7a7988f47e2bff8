// How the form sets each field of the driver's flag table (flags.json, printed by
// `docker-machine-driver-harvester flags --json --driver hcivm`). A flag without a row here and not in
// NOT_IN_FORM has no field: the tests fail on it.

// Values the driver accepts, as its usage texts list them.
const DISK_BUSES = ['virtio', 'scsi', 'sata'];
const NIC_MODELS = ['virtio', 'e1000', 'e1000e', 'igb', 'ne2k_pci', 'pcnet', 'rtl8139'];

export const ENUMS = {
  diskBus:                   DISK_BUSES,
  networkModel:              NIC_MODELS,
  os:                        ['linux'],
  cloudProviderDistribution: ['rke2', 'k3s'],
  evictionStrategy:          ['LiveMigrateIfPossible', 'LiveMigrate', 'None', 'External'],
  maintenanceStrategy:       ['', 'Migrate', 'ShutdownAndRestartAfterEnable', 'ShutdownAndRestartAfterDisable', 'Shutdown'],
};

// widget: text, password, number, checkbox, textarea, enum (ENUMS), pick (one of a Harvester list), multi (a
// comma-separated set from a Harvester list), list (a JSON list edited row by row, see lists.js), cluster (the
// guest cluster's name, filled from the cluster being created).
export const FORM_FIELDS = {
  clusterName:                 { widget: 'cluster' },
  vmNamespace:                 { widget: 'pick', source: 'namespaces' },
  vmAffinity:                  { widget: 'textarea' },
  zone:                        { widget: 'multi', source: 'zones' },
  region:                      { widget: 'multi', source: 'regions' },
  cpuCount:                    { widget: 'number' },
  memorySize:                  { widget: 'number' },
  reservedMemorySize:          { widget: 'number' },
  cpuModel:                    { widget: 'text' },
  cpuPinning:                  { widget: 'checkbox' },
  isolateEmulatorThread:       { widget: 'checkbox' },
  machineType:                 { widget: 'text' },
  enableEfi:                   { widget: 'checkbox' },
  enableSecureBoot:            { widget: 'checkbox' },
  enableTpm:                   { widget: 'checkbox' },
  persistentTpm:               { widget: 'checkbox' },
  os:                          { widget: 'enum' },
  imageName:                   { widget: 'pick', source: 'images' },
  diskSize:                    { widget: 'number' },
  diskBus:                     { widget: 'enum' },
  diskInfo:                    { widget: 'list', list: 'disks' },
  networkName:                 { widget: 'pick', source: 'networks' },
  networkModel:                { widget: 'enum' },
  networkInfo:                 { widget: 'list', list: 'nics' },
  ipPool:                      { widget: 'text' },
  ipPoolGateway:               { widget: 'text' },
  ipPoolDns:                   { widget: 'text' },
  ipPoolDnsSearch:             { widget: 'text' },
  vgpuInfo:                    { widget: 'list', list: 'vgpus' },
  hostDeviceInfo:              { widget: 'list', list: 'hostDevices' },
  sshUser:                     { widget: 'text' },
  sshPort:                     { widget: 'number' },
  sshPassword:                 { widget: 'password' },
  keyPairName:                 { widget: 'pick', source: 'keypairs' },
  sshPrivateKeyPath:           { widget: 'text' },
  sshKeypairs:                 { widget: 'multi', source: 'keypairs' },
  userData:                    { widget: 'textarea' },
  networkData:                 { widget: 'textarea' },
  userDataSecret:              { widget: 'text' },
  networkDataSecret:           { widget: 'text' },
  skipGuestAgent:              { widget: 'checkbox' },
  cloudProviderConfig:         { widget: 'textarea' },
  generateCloudProviderConfig: { widget: 'checkbox' },
  cloudProviderServer:         { widget: 'text' },
  cloudProviderForRke2:        { widget: 'checkbox' },
  cloudProviderDistribution:   { widget: 'enum' },
  cloudProviderDropIn:         { widget: 'checkbox' },
  createTimeout:               { widget: 'number' },
  evictionStrategy:            { widget: 'enum' },
  maintenanceStrategy:         { widget: 'enum' },
  vmLabels:                    { widget: 'text' },
  vmPatch:                     { widget: 'textarea' },
};

// Flags the machine-config form leaves alone, and why.
export const NOT_IN_FORM = {
  kubeconfigContent: 'the cloud credential holds it',
  cloudConfig:       'rancher-machine fills it with its install script',
  clusterType:       'unused by the driver',
  clusterId:         'unused by the driver',
  networkType:       'unused by the driver',
};

export const GROUP_TITLES = {
  placement:        'Namespace and placement',
  instance:         'Instance',
  disks:            'Disks',
  networks:         'Networks',
  devices:          'Devices',
  access:           'SSH access',
  'cloud-init':     'Cloud-init',
  'cloud-provider': 'Guest cloud provider',
  lifecycle:        'Lifecycle',
  advanced:         'Advanced: VM patch',
};

// formSections groups the flag table's form fields by their group, in the table's order.
export function formSections(flags) {
  const sections = [];

  for (const f of flags) {
    if (!FORM_FIELDS[f.field]) {
      continue;
    }
    let s = sections.find((x) => x.group === f.group);

    if (!s) {
      s = { group: f.group, title: GROUP_TITLES[f.group] || f.group, fields: [] };
      sections.push(s);
    }
    s.fields.push({ ...f, ...FORM_FIELDS[f.field] });
  }

  return sections;
}
