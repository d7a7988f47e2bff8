// Module harvester runs Harvester's own VirtualMachine validator (github.com/harvester/harvester
// pkg/webhook/resources/virtualmachine) for the e2e test bed, so the simulated Harvester refuses what a real one
// refuses. It is built by hack/tools.sh into a cache outside the work tree; it is never part of the plugin's own
// module graph. The github.com/harvester/harvester version is the root go.mod's; Harvester's go.mod `replace`
// lines are repeated below (it pins KubeVirt v1.7 and Kubernetes 0.33, so it cannot share the kubevirt tool's
// module).
module github.com/harvester/docker-machine-driver-harvester/hack/tools/harvester

go 1.26.0

require (
	github.com/harvester/harvester v1.8.2
	github.com/k8snetworkplumbingwg/network-attachment-definition-client v1.7.7
	github.com/rancher/wrangler/v3 v3.2.4
	github.com/sirupsen/logrus v1.9.3
	k8s.io/api v0.34.1
	k8s.io/apimachinery v0.34.1
	k8s.io/client-go v12.0.0+incompatible
	kubevirt.io/api v1.7.0
)

require (
	emperror.dev/errors v0.8.1 // indirect
	github.com/aws/aws-sdk-go v1.55.7 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/blang/semver/v4 v4.0.0 // indirect
	github.com/c9s/goprocinfo v0.0.0-20210130143923-c95fcf8c64a8 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/cisco-open/operator-tools v0.37.0 // indirect
	github.com/cockroachdb/errors v1.12.0 // indirect
	github.com/cockroachdb/logtags v0.0.0-20230118201751-21c54148d20b // indirect
	github.com/cockroachdb/redact v1.1.5 // indirect
	github.com/containernetworking/cni v1.3.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/emicklei/go-restful/v3 v3.12.2 // indirect
	github.com/evanphx/json-patch v5.9.11+incompatible // indirect
	github.com/evanphx/json-patch/v5 v5.9.11 // indirect
	github.com/felixge/httpsnoop v1.0.4 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/fxamacker/cbor/v2 v2.9.0 // indirect
	github.com/gammazero/deque v1.0.0 // indirect
	github.com/gammazero/workerpool v1.1.3 // indirect
	github.com/getsentry/sentry-go v0.27.0 // indirect
	github.com/ghodss/yaml v1.0.0 // indirect
	github.com/go-kit/log v0.2.1 // indirect
	github.com/go-logfmt/logfmt v0.6.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-ole/go-ole v1.3.0 // indirect
	github.com/go-openapi/jsonpointer v0.21.1 // indirect
	github.com/go-openapi/jsonreference v0.21.0 // indirect
	github.com/go-openapi/swag v0.23.1 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/google/gnostic-models v0.7.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/handlers v1.5.2 // indirect
	github.com/gorilla/websocket v1.5.4-0.20250319132907-e064f32e3674 // indirect
	github.com/harvester/docker-machine-driver-harvester/hack/tools/internal/serve v0.0.0
	github.com/harvester/go-common v0.0.0-20260119194217-0f17176ce67e // indirect
	github.com/harvester/harvester-network-controller v1.6.0-rc3 // indirect
	github.com/harvester/node-manager v1.6.0-rc3 // indirect
	github.com/iancoleman/orderedmap v0.3.0 // indirect
	github.com/jmespath/go-jmespath v0.4.0 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/k3s-io/helm-controller v0.16.1 // indirect
	github.com/k8snetworkplumbingwg/whereabouts v0.9.4 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/kube-logging/logging-operator v0.0.0-20250424202944-7e1f9aad6e21 // indirect
	github.com/kube-logging/logging-operator/pkg/sdk v0.12.0 // indirect
	github.com/kubeovn/kube-ovn v1.14.10 // indirect
	github.com/kubereboot/kured v1.13.1 // indirect
	github.com/kubernetes-csi/external-snapshotter/client/v4 v4.2.0 // indirect
	github.com/kubernetes/dashboard v1.10.1 // indirect
	github.com/longhorn/backupstore v0.0.0-20250804022317-794abf817297 // indirect
	github.com/longhorn/go-common-libs v0.0.0-20250921030719-16313e7f30b3 // indirect
	github.com/longhorn/longhorn-manager v1.10.0 // indirect
	github.com/mailru/easyjson v0.9.0 // indirect
	github.com/mitchellh/go-ps v1.0.0 // indirect
	github.com/moby/sys/mountinfo v0.7.2 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/onsi/gomega v1.39.1 // indirect
	github.com/openshift/api v0.0.0 // indirect
	github.com/openshift/client-go v3.9.0+incompatible // indirect
	github.com/openshift/custom-resource-status v1.1.2 // indirect
	github.com/openshift/library-go v0.0.0-20240621150525-4bb4238aef81 // indirect
	github.com/ovn-org/libovsdb v0.7.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.22 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/power-devops/perfstat v0.0.0-20240221224432-82ca36839d55 // indirect
	github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring v0.82.0 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.17.0 // indirect
	github.com/rancher/aks-operator v1.11.5 // indirect
	github.com/rancher/eks-operator v1.11.5 // indirect
	github.com/rancher/fleet/pkg/apis v0.12.3 // indirect
	github.com/rancher/gke-operator v1.11.5 // indirect
	github.com/rancher/lasso v0.2.3 // indirect
	github.com/rancher/norman v0.7.0 // indirect
	github.com/rancher/rancher v0.0.0-20240618122559-b9ec494d4f6f // indirect
	github.com/rancher/rancher/pkg/apis v0.0.0 // indirect
	github.com/rancher/rke v1.8.5 // indirect
	github.com/rancher/system-upgrade-controller/pkg/apis v0.0.0-20250306000150-b1a9781accab // indirect
	github.com/rancher/wrangler v1.1.2 // indirect
	github.com/rhobs/operator-observability-toolkit v0.0.29 // indirect
	github.com/robfig/cron v1.2.0 // indirect
	github.com/rogpeppe/go-internal v1.13.1 // indirect
	github.com/shirou/gopsutil/v3 v3.24.5 // indirect
	github.com/shopspring/decimal v1.4.0 // indirect
	github.com/slok/goresilience v0.2.0 // indirect
	github.com/spf13/cast v1.9.2 // indirect
	github.com/spf13/pflag v1.0.7 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	go.opentelemetry.io/otel v1.37.0 // indirect
	go.opentelemetry.io/otel/trace v1.37.0 // indirect
	go.uber.org/mock v0.5.2 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/crypto v0.47.0 // indirect
	golang.org/x/exp v0.0.0-20250911091902-df9299821621 // indirect
	golang.org/x/net v0.49.0 // indirect
	golang.org/x/oauth2 v0.31.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
	golang.org/x/term v0.39.0 // indirect
	golang.org/x/text v0.33.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	gomodules.xyz/jsonpatch/v2 v2.5.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250715232539-7130f93afb79 // indirect
	google.golang.org/grpc v1.75.1 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
	gopkg.in/evanphx/json-patch.v4 v4.12.0
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/apiextensions-apiserver v0.34.1 // indirect
	k8s.io/apiserver v0.34.1 // indirect
	k8s.io/component-base v0.34.1 // indirect
	k8s.io/klog v1.0.0 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
	k8s.io/kube-aggregator v0.33.1 // indirect
	k8s.io/kube-openapi v0.32.8 // indirect
	k8s.io/kubectl v0.32.2 // indirect
	k8s.io/kubernetes v1.34.2 // indirect
	k8s.io/mount-utils v0.34.1 // indirect
	k8s.io/utils v0.0.0-20250820121507-0af2bda4dd1d // indirect
	kubevirt.io/client-go v1.7.0 // indirect
	kubevirt.io/containerized-data-importer-api v1.64.0 // indirect
	kubevirt.io/controller-lifecycle-operator-sdk/api v0.2.4 // indirect
	kubevirt.io/kubevirt v1.7.0 // indirect
	sigs.k8s.io/cluster-api v1.9.5 // indirect
	sigs.k8s.io/controller-runtime v0.21.0 // indirect
	sigs.k8s.io/json v0.0.0-20241014173422-cfa47c3a1cc8 // indirect
	sigs.k8s.io/randfill v1.0.0 // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.7.0 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

// Harvester v1.8.2's go.mod replace lines, repeated: replace directives of a dependency do not apply.
replace (
	github.com/containerd/containerd => github.com/containerd/containerd v1.7.33
	github.com/docker/distribution => github.com/docker/distribution v2.8.2+incompatible // oras dep requires a replace is set
	github.com/docker/docker => github.com/docker/docker v25.0.6+incompatible // oras dep requires a replace is set
	github.com/gin-gonic/gin => github.com/gin-gonic/gin v1.9.1
	github.com/google/gnostic-models => github.com/google/gnostic-models v0.6.9
	github.com/harvester/harvester-network-controller => github.com/harvester/harvester-network-controller v1.6.0-rc3
	github.com/openshift/api => github.com/openshift/api v0.0.0-20191219222812-2987a591a72c
	github.com/openshift/client-go => github.com/openshift/client-go v0.0.0-20200521150516-05eb9880269c
	github.com/operator-framework/operator-lifecycle-manager => github.com/operator-framework/operator-lifecycle-manager v0.0.0-20190128024246-5eb7ae5bdb7a
	github.com/rancher/lasso => github.com/rancher/lasso v0.0.0-20241202185148-04649f379358
	github.com/rancher/rancher => github.com/rancher/rancher v0.0.0-20250828140533-07a90f09a491
	github.com/rancher/rancher/pkg/apis => github.com/rancher/rancher/pkg/apis v0.0.0-20250828140533-07a90f09a491
	github.com/rancher/rancher/pkg/client => github.com/rancher/rancher/pkg/client v0.0.0-20250828140533-07a90f09a491
	// handle rancher dependenices
	go.qase.io/client => github.com/rancher/qase-go/client v0.0.0-20231114201952-65195ec001fa

	helm.sh/helm/v3 => github.com/rancher/helm/v3 v3.15.1-rancher2
	k8s.io/api => k8s.io/api v0.33.7
	k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.33.7
	k8s.io/apimachinery => k8s.io/apimachinery v0.33.7
	k8s.io/apiserver => k8s.io/apiserver v0.33.7
	k8s.io/cli-runtime => k8s.io/cli-runtime v0.33.7
	k8s.io/client-go => k8s.io/client-go v0.33.7
	k8s.io/cloud-provider => k8s.io/cloud-provider v0.33.7
	k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.33.7
	k8s.io/code-generator => k8s.io/code-generator v0.33.7
	k8s.io/component-base => k8s.io/component-base v0.33.7
	k8s.io/component-helpers => k8s.io/component-helpers v0.33.7
	k8s.io/controller-manager => k8s.io/controller-manager v0.33.7
	k8s.io/cri-api => k8s.io/cri-api v0.33.7
	k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.33.7
	k8s.io/dynamic-resource-allocation => k8s.io/dynamic-resource-allocation v0.33.7
	k8s.io/endpointslice => k8s.io/endpointslice v0.33.7
	k8s.io/gengo => k8s.io/gengo v0.0.0-20240826214909-a7b603a56eb7
	k8s.io/kms => k8s.io/kms v0.33.7
	k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.33.7
	k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.33.7
	k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20250318190949-c8a335a9a2ff
	k8s.io/kube-proxy => k8s.io/kube-proxy v0.33.7
	k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.33.7
	k8s.io/kubectl => k8s.io/kubectl v0.33.7
	k8s.io/kubelet => k8s.io/kubelet v0.33.7
	k8s.io/kubernetes => k8s.io/kubernetes v1.33.7
	k8s.io/legacy-cloud-providers => k8s.io/legacy-cloud-providers v0.33.7
	k8s.io/metrics => k8s.io/metrics v0.33.7
	k8s.io/mount-utils => k8s.io/mount-utils v0.33.7
	k8s.io/pod-security-admission => k8s.io/pod-security-admission v0.33.7
	k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.33.7
)

replace github.com/harvester/docker-machine-driver-harvester/hack/tools/internal/serve => ../internal/serve
