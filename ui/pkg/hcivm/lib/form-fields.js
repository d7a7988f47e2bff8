// How the machine-config form sets each field of the driver's flag table (flags.json, written by `make ui-flags`
// from `docker-machine-driver-harvester flags --json --driver hcivm`). A flag is one row here (its section and
// control) and its words in l10n/en-us.yaml (hcivm.machineConfig.fields.<field>.label, optional .tooltip and
// .placeholder, hcivm.machineConfig.options.<field>.<value> for a choice); or a row of NOT_IN_FORM saying why the
// form has no control for it. The tests fail on a flag with neither, and on a label, tooltip or option missing.
//
// The sections follow Rancher's own Harvester form (rancher/dashboard pkg/harvester-manager/machine-config/
// harvester.vue, v2.12–v2.15): CPU, memory, namespace, SSH user, reserved memory and CPU model first, then the
// volumes and the networks; the rest goes to the pool's Advanced section (advanced: true), where that form puts
// vGPUs, user data, firmware options, network data and scheduling.

export const SECTIONS = [
  { id: 'basics' },
  { id: 'volumes' },
  { id: 'networks' },
  { id: 'devices', advanced: true },
  { id: 'userData', advanced: true },
  { id: 'networkData', advanced: true },
  { id: 'instance', advanced: true },
  { id: 'scheduling', advanced: true },
  { id: 'staticAddresses', advanced: true },
  { id: 'access', advanced: true },
  { id: 'cloudProvider', advanced: true },
  { id: 'lifecycle', advanced: true },
];

// control:
//   input, password, multilinePassword (LabeledInput), unit (UnitInput: suffix, min), select (LabeledSelect of
//   `options`: a list read from Harvester, see harvester.js choices, or `values`, the driver's own choices),
//   multi (LabeledSelect, several values, written comma-separated), checkbox (Checkbox), yaml (YamlEditor, the
//   value as text or base64 as the driver reads it; `templates`: Harvester's cloud-init templates of that kind),
//   json (YamlEditor showing a JSON object, written back as JSON; `lists`: a JSON list too), keyValue (KeyValue, written key=value,…),
//   disks, nics, vgpus, hostDevices (the list editors), rootDisk and nic (the single disk and NIC of a config
//   without a disk or NIC list, edited inside the volumes and networks).
// showIf: shown only while that other field is set. required: the form refuses the config without it. titled: the
// section's title is the field's label.
export const FORM_FIELDS = {
  cpuCount:           { section: 'basics', control: 'unit', suffix: 'C', min: 1, required: true },
  memorySize:         { section: 'basics', control: 'unit', suffix: 'GiB', min: 1, required: true },
  vmNamespace:        { section: 'basics', control: 'select', options: 'namespaces', required: true, taggable: true },
  sshUser:            { section: 'basics', control: 'input', required: true },
  reservedMemorySize: { section: 'basics', control: 'unit', suffix: 'MiB', min: -1 },
  cpuModel:           { section: 'basics', control: 'select', options: 'cpuModels', taggable: true },

  diskInfo:  { section: 'volumes', control: 'disks' },
  imageName: { section: 'volumes', control: 'rootDisk' },
  diskSize:  { section: 'volumes', control: 'rootDisk' },
  diskBus:   { section: 'volumes', control: 'rootDisk' },

  networkInfo:  { section: 'networks', control: 'nics' },
  networkName:  { section: 'networks', control: 'nic' },
  networkModel: { section: 'networks', control: 'nic' },

  vgpuInfo:       { section: 'devices', control: 'vgpus' },
  hostDeviceInfo: { section: 'devices', control: 'hostDevices' },

  userData:       { section: 'userData', control: 'yaml', templates: 'userData', titled: true },
  userDataSecret: { section: 'userData', control: 'input' },
  skipGuestAgent: { section: 'userData', control: 'checkbox' },

  networkData:       { section: 'networkData', control: 'yaml', templates: 'networkData', titled: true },
  networkDataSecret: { section: 'networkData', control: 'input' },

  cpuPinning:            { section: 'instance', control: 'checkbox', needs: 'cpuManager' },
  isolateEmulatorThread: { section: 'instance', control: 'checkbox', showIf: 'cpuPinning' },
  enableTpm:             { section: 'instance', control: 'checkbox' },
  persistentTpm:         { section: 'instance', control: 'checkbox', showIf: 'enableTpm' },
  enableEfi:             { section: 'instance', control: 'checkbox' },
  enableSecureBoot:      { section: 'instance', control: 'checkbox', showIf: 'enableEfi' },
  persistentEfi:         { section: 'instance', control: 'checkbox', showIf: 'enableEfi' },
  machineType:           { section: 'instance', control: 'input' },
  blockMultiQueue:       { section: 'instance', control: 'checkbox' },
  ioThreadsPolicy:       { section: 'instance', control: 'select', values: ['', 'shared', 'auto', 'supplementalPool'] },
  ioThreadCount:         { section: 'instance', control: 'input', showIf: 'ioThreadsPolicy' },
  vmPatch:               { section: 'instance', control: 'json', lists: true },

  zone:       { section: 'scheduling', control: 'multi', options: 'zones' },
  region:     { section: 'scheduling', control: 'multi', options: 'regions' },
  vmAffinity: { section: 'scheduling', control: 'json' },

  ipPool:          { section: 'staticAddresses', control: 'input' },
  ipPoolGateway:   { section: 'staticAddresses', control: 'input' },
  ipPoolDns:       { section: 'staticAddresses', control: 'input' },
  ipPoolDnsSearch: { section: 'staticAddresses', control: 'input' },
  ipPoolName:      { section: 'staticAddresses', control: 'input' },

  sshPort:     { section: 'access', control: 'input' },
  sshPassword: { section: 'access', control: 'password' },
  sshKeypairs: { section: 'access', control: 'multi', options: 'keypairs' },

  generateCloudProviderConfig: { section: 'cloudProvider', control: 'checkbox' },
  cloudProviderServer:         { section: 'cloudProvider', control: 'input', showIf: 'generateCloudProviderConfig' },
  cloudProviderConfig:         { section: 'cloudProvider', control: 'multilinePassword' },
  cloudProviderDistribution:   { section: 'cloudProvider', control: 'select', values: ['', 'rke2', 'k3s'] },
  cloudProviderDropIn:         { section: 'cloudProvider', control: 'checkbox' },
  cloudProviderForRke2:        { section: 'cloudProvider', control: 'checkbox' },

  createTimeout:       { section: 'lifecycle', control: 'unit', suffix: 's', min: 1 },
  evictionStrategy:    { section: 'lifecycle', control: 'select', values: ['', 'LiveMigrateIfPossible', 'LiveMigrate', 'None', 'External'] },
  maintenanceStrategy: { section: 'lifecycle', control: 'select', values: ['', 'Migrate', 'ShutdownAndRestartAfterEnable', 'ShutdownAndRestartAfterDisable', 'Shutdown'] },
  vmLabels:            { section: 'lifecycle', control: 'keyValue' },
};

// Choices of the list editors' columns that are the driver's own (harvester/config parse_disks.go diskBuses,
// cacheModes, accessModes, volumeModes; parse_nics.go nicModels and interface types).
export const LIST_VALUES = {
  bus:        ['virtio', 'scsi', 'sata'],
  diskType:   ['disk', 'cd-rom'],
  cache:      ['none', 'writethrough', 'writeback'],
  accessMode: ['ReadWriteMany', 'ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteOncePod'],
  volumeMode: ['Block', 'Filesystem'],
  model:      ['virtio', 'e1000', 'e1000e', 'igb', 'ne2k_pci', 'pcnet', 'rtl8139'],
  nicType:    ['bridge', 'masquerade'],
};

// Flags the machine-config form has no control for, and why (the reasons are shown nowhere; they are the answer
// to "where is this flag in the form?").
export const NOT_IN_FORM = {
  kubeconfigContent: 'The cloud credential holds it (a private credential field).',
  clusterType:       'The cloud credential holds it (a public credential field, read by Rancher, not by the driver).',
  clusterId:         'The cloud credential holds it (a public credential field, read by Rancher, not by the driver).',
  clusterName:       'The form fills it from the cluster being created or edited, in every pool: Rancher passes it only to the driver named harvester.',
  cloudConfig:       'rancher-machine fills it with the file that holds Rancher\'s install script.',
  networkType:       'Unused by the driver (kept for compatibility).',
  os:                'Linux is the only value the driver accepts, and its default.',
  sshPrivateKeyPath: 'A path on the machine that runs the driver: inside Rancher, its provisioning job\'s pod, where no such file is.',
  keyPairName:       'It names the key pair whose private key is at the private key path, which cannot be given inside Rancher; key pairs for people to log in with are the SSH key pairs field.',
};

// fieldsOf lists a section's fields in FORM_FIELDS' order, each with its flags.json entry.
export function fieldsOf(section, flags) {
  return Object.entries(FORM_FIELDS).filter(([, row]) => row.section === section)
    .map(([field, row]) => ({ field, ...flags.find((f) => f.field === field), ...row }));
}
