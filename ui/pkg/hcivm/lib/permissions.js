// What the credential must be allowed to do in Harvester, from the driver's access lists: harvester/create.go
// createAccess, internal/kube/wait.go WatchMachineAccess, harvester/remove.go removeAccess (asked by `check` and
// the pre-create check, precreate.go neededAccess), internal/ippool Access, precreate_hostdevices.go
// hostDeviceAccess and cloudprovider.go cloudProviderAccess.
export const PERMISSIONS = [
  { when: 'always', group: '', resource: 'secrets', verbs: 'create, patch', where: 'VM namespace' },
  { when: 'always', group: 'kubevirt.io', resource: 'virtualmachines', verbs: 'create, list, watch, update, delete', where: 'VM namespace' },
  { when: 'always', group: 'kubevirt.io', resource: 'virtualmachineinstances', verbs: 'list, watch', where: 'VM namespace' },
  { when: 'static addresses (ipPool)', group: '', resource: 'configmaps', verbs: 'create, get, list, patch, delete', where: "network's namespace" },
  { when: 'host devices (read; check skipped without)', group: 'devices.harvesterhci.io', resource: 'pcidevices, usbdevices, pcideviceclaims', verbs: 'list', where: 'cluster' },
  { when: 'generateCloudProviderConfig', group: '', resource: 'serviceaccounts; secrets', verbs: 'create, get; create, get, list, watch', where: 'VM namespace' },
  { when: 'generateCloudProviderConfig', group: 'rbac.authorization.k8s.io', resource: 'roles, rolebindings', verbs: 'create, get', where: 'VM namespace and harvester-system' },
  { when: 'generateCloudProviderConfig', group: 'rbac.authorization.k8s.io', resource: 'clusterroles, clusterrolebindings', verbs: 'create, get', where: 'cluster' },
  { when: 'generateCloudProviderConfig', group: '(all)', resource: "every permission the guest's account gets (README: What the account may do), or escalate and bind", verbs: '', where: '' },
];
