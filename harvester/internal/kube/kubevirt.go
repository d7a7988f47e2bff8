package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// VMs and VMIs go through a client of this package over client-go's REST client rather than KubeVirt's generated
// one (kubevirt.io/client-go kubevirt/typed/core/v1). That one is built on k8s.io/client-go/gentype, which links
// client-go's testing package and through it kube-openapi, gnostic-models and protobuf, and its scheme registers
// every KubeVirt API group (kubevirt.io/client-go kubevirt/scheme): over a hundred packages the plugin used none
// of. This client sends the requests KubeVirt's sends, request for request — paths, parameters, headers, bodies —
// and decodes the answers the same way (kubevirt_test.go compares the two on each method).

// KubevirtInterface gives the clients of a namespace's VMs and VMIs ("" for all namespaces, to list and watch).
// KubeVirt's generated clientset (kubevirtv1client.KubevirtV1Interface), fakes included, has the same methods with
// wider results; harvester/internal/kubefake adapts its fake.
type KubevirtInterface interface {
	VirtualMachines(namespace string) VirtualMachineInterface
	VirtualMachineInstances(namespace string) VirtualMachineInstanceInterface
}

// VirtualMachineInterface is what the driver does with VMs: the methods of KubeVirt's generated
// VirtualMachineInterface it calls, with their signatures.
type VirtualMachineInterface interface {
	Create(ctx context.Context, vm *kubevirtv1.VirtualMachine, opts metav1.CreateOptions) (*kubevirtv1.VirtualMachine, error)
	Update(ctx context.Context, vm *kubevirtv1.VirtualMachine, opts metav1.UpdateOptions) (*kubevirtv1.VirtualMachine, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*kubevirtv1.VirtualMachine, error)
	List(ctx context.Context, opts metav1.ListOptions) (*kubevirtv1.VirtualMachineList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*kubevirtv1.VirtualMachine, error)
	// Stop asks KubeVirt's stop subresource (subresources.kubevirt.io) to power the VM off.
	Stop(ctx context.Context, name string, opts *kubevirtv1.StopOptions) error
}

// VirtualMachineInstanceInterface is what the driver does with VMIs: the methods of KubeVirt's generated
// VirtualMachineInstanceInterface it calls, with their signatures.
type VirtualMachineInstanceInterface interface {
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*kubevirtv1.VirtualMachineInstance, error)
	List(ctx context.Context, opts metav1.ListOptions) (*kubevirtv1.VirtualMachineInstanceList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*kubevirtv1.VirtualMachineInstance, error)
}

// kubevirtScheme holds what the VM and VMI clients encode and decode: KubeVirt's core types (kubevirt.io/v1), and
// the option types, watch events and Status that metav1.AddToGroupVersion registers — as KubeVirt's generated
// scheme registers them (kubevirt.io/client-go v1.9.0 kubevirt/scheme/register.go, init), its other API groups left
// out. The option types are registered in kubevirt.io/v1 as there, so a DeleteOptions body says the same apiVersion.
var (
	kubevirtScheme = func() *runtime.Scheme {
		s := runtime.NewScheme()
		metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
		utilruntime.Must(kubevirtv1.AddToScheme(s))
		return s
	}()
	kubevirtCodecs = serializer.NewCodecFactory(kubevirtScheme)
	// kubevirtParams turns options into query parameters, as the generated clients' scheme.ParameterCodec does.
	kubevirtParams = runtime.NewParameterCodec(kubevirtScheme)
)

// newKubevirtClient is the client for VMs and VMIs, configured as KubeVirt's NewForConfigAndClient configures its
// own (kubevirt.io/client-go v1.9.0 kubevirt/typed/core/v1/core_client.go, setConfigDefaults: group version, /apis,
// the generated clients' codecs, the default user agent), with decoders that bound quantities (guardedSerializer).
// The content type stays the rest.Config's: JSON unless set.
func newKubevirtClient(cfg *rest.Config, httpClient *http.Client) (KubevirtInterface, error) {
	cfg = rest.CopyConfig(cfg)
	gv := kubevirtv1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = guardedSerializer{
		NegotiatedSerializer: rest.CodecFactoryForGeneratedClient(kubevirtScheme, kubevirtCodecs).WithoutConversion(),
		scheme:               kubevirtScheme,
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return kubevirtREST{rc}, nil
}

// kubevirtREST is KubevirtInterface over a REST client for kubevirt.io/v1.
type kubevirtREST struct{ client rest.Interface }

func (k kubevirtREST) VirtualMachines(namespace string) VirtualMachineInterface {
	return virtualMachines{resourceClient[*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineList]{
		client: k.client, namespace: namespace, resource: "virtualmachines",
		newObject: func() *kubevirtv1.VirtualMachine { return &kubevirtv1.VirtualMachine{} },
		newList:   func() *kubevirtv1.VirtualMachineList { return &kubevirtv1.VirtualMachineList{} },
	}}
}

func (k kubevirtREST) VirtualMachineInstances(namespace string) VirtualMachineInstanceInterface {
	return resourceClient[*kubevirtv1.VirtualMachineInstance, *kubevirtv1.VirtualMachineInstanceList]{
		client: k.client, namespace: namespace, resource: "virtualmachineinstances",
		newObject: func() *kubevirtv1.VirtualMachineInstance { return &kubevirtv1.VirtualMachineInstance{} },
		newList:   func() *kubevirtv1.VirtualMachineInstanceList { return &kubevirtv1.VirtualMachineInstanceList{} },
	}
}

// resourceClient makes the requests of client-go's gentype.ClientWithList (k8s.io/client-go v0.37.2
// gentype/type.go), on which KubeVirt's generated clients are built, for one resource of a namespace ("" for all),
// with JSON as the content type (gentype's prefersProtobuf is never set for KubeVirt's types).
type resourceClient[T interface {
	runtime.Object
	metav1.Object
}, L runtime.Object] struct {
	client    rest.Interface
	namespace string
	resource  string
	newObject func() T
	newList   func() L
}

func (c resourceClient[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	result := c.newObject()
	err := c.client.Get().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(name).
		VersionedParams(&opts, kubevirtParams).
		Do(ctx).
		Into(result)
	return result, err
}

func (c resourceClient[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	result := c.newList()
	err := c.client.Get().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, kubevirtParams).
		Timeout(timeoutOf(opts)).
		Do(ctx).
		Into(result)
	return result, err
}

func (c resourceClient[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.client.Get().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, kubevirtParams).
		Timeout(timeoutOf(opts)).
		Watch(ctx)
}

func (c resourceClient[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	result := c.newObject()
	err := c.client.Post().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, kubevirtParams).
		Body(obj).
		Do(ctx).
		Into(result)
	return result, err
}

func (c resourceClient[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	result := c.newObject()
	err := c.client.Put().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(obj.GetName()).
		VersionedParams(&opts, kubevirtParams).
		Body(obj).
		Do(ctx).
		Into(result)
	return result, err
}

// Delete sends the options as the request's body, as the API server reads them (preconditions, propagation).
func (c resourceClient[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.client.Delete().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(name).
		Body(&opts).
		Do(ctx).
		Error()
}

func (c resourceClient[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	result := c.newObject()
	err := c.client.Patch(pt).
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(name).
		SubResource(subresources...).
		VersionedParams(&opts, kubevirtParams).
		Body(data).
		Do(ctx).
		Into(result)
	return result, err
}

// timeoutOf is a list's or watch's timeoutSeconds as the request's timeout, as gentype sets it.
func timeoutOf(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

// virtualMachines adds the VM's subresources the driver uses.
type virtualMachines struct {
	resourceClient[*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineList]
}

// Stop puts the options, as JSON, to the VM's stop subresource on KubeVirt's aggregated API
// (kubevirt.io/client-go v1.9.0 kubevirt/typed/core/v1/virtualmachine_expansion.go, Stop).
func (c virtualMachines) Stop(ctx context.Context, name string, opts *kubevirtv1.StopOptions) error {
	body, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	return c.client.Put().
		AbsPath(fmt.Sprintf("/apis/%s/%s", kubevirtv1.SubresourceGroupName, kubevirtv1.ApiStorageVersion)).
		Namespace(c.namespace).
		Resource(c.resource).
		Name(name).
		SubResource("stop").
		Body(body).
		Do(ctx).
		Error()
}
