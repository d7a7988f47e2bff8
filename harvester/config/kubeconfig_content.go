package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdlatest "k8s.io/client-go/tools/clientcmd/api/latest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"

	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
	"github.com/harvester/docker-machine-driver-harvester/userdata"
)

// A kubeconfig given as content is read the way client-go reads it, and the driver decides which context, user
// and cluster it authenticates with the way client-go decides, so the inline-only rule (inline_credential.go)
// judges exactly what client-go would use. client-go v0.37 reads the bytes with clientcmd.Load: YAML (JSON is
// YAML) through sigs.k8s.io/yaml, whose parser is go.yaml.in/yaml/v2 and which keeps only the first document and
// the last of a repeated key, then case-sensitive JSON into clientcmd/api/v1, then the conversion to maps by name,
// which fails on a repeated name printing the whole list (api/v1/conversion.go). NewDefaultClientConfig with no
// overrides then takes (client_config.go, getContextName, getContext, getAuthInfo, getCluster) the context named
// by current-context — "" when there is none —, and when no context has that name an empty one rather than an
// error; then the user and the cluster that context names, and an empty one for a name no entry has. So without
// a current-context, or with one that names no context, client-go takes the user and the cluster named "",
// whatever they hold; and ConfirmUsable opens the files of that user and cluster before it reports a missing
// context (validation.go, validateAuthInfo, validateClusterInfo).
//
// LoadContentKubeconfig therefore refuses, before client-go sees the kubeconfig, everything whose choice a reader
// could take another way than client-go does: more than one document, a key given twice, a name given twice, no
// current-context or one that names no context, a context that names no user or cluster, or one absent. What is
// left is one context, one user and one cluster, all named; the inline-only rule applies to those, and client-go
// is given those three alone (ContentKubeconfig.Chosen), so nothing else it holds can be read.

// maxKubeconfigSize bounds a kubeconfig given as content: as --harvester-kubeconfig-content takes it.
const maxKubeconfigSize = userdata.MaxSize

// KubeconfigError is why a kubeconfig given as content is refused. Its message names the field, never a value
// that may hold a secret; it reads after the kubeconfig's name ("--harvester-kubeconfig-content: sets no …").
type KubeconfigError struct {
	Field string // the kubeconfig's field, e.g. current-context, users, contexts[0].context.user
	msg   string
}

func (e *KubeconfigError) Error() string { return e.msg }

func kubeconfigErrorf(field, format string, args ...any) error {
	return &KubeconfigError{Field: field, msg: Redact(fmt.Sprintf(format, args...))}
}

// ContentKubeconfig is a kubeconfig given as content, read as client-go reads it, with the context, user and
// cluster client-go authenticates with.
type ContentKubeconfig struct {
	// Context, User and Cluster are the names of the current context and of the user and cluster it names.
	Context, User, Cluster string
	// All is the kubeconfig as clientcmd.Load gives it, every entry included.
	All *clientcmdapi.Config
	// Chosen is the kubeconfig reduced to the current context, its user and its cluster: all client-go is given.
	Chosen *clientcmdapi.Config
}

// LoadContentKubeconfig reads a kubeconfig given as content (see above): it refuses what is ambiguous, decides
// the context, user and cluster as client-go does, and refuses the kubeconfig when those use anything but inline
// data (checkInlineCredential). It opens no file and runs nothing; its errors name the field and quote no value
// that may hold a secret.
func LoadContentKubeconfig(data []byte) (*ContentKubeconfig, error) {
	all, err := loadKubeconfig(data)
	if err != nil {
		return nil, err
	}
	k, err := chooseAsClientGo(all)
	if err != nil {
		return nil, err
	}
	if err := checkInlineCredential(k); err != nil {
		return nil, err
	}
	return k, nil
}

// RESTConfig is client-go's client configuration of the chosen context, user and cluster alone: client-go is
// never given another entry. An exec plugin would be refused by client-go's DenyAll policy, and an
// auth-provider plugin dropped, should one ever pass the inline-only rule.
func (k *ContentKubeconfig) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.NewDefaultClientConfig(*k.Chosen, nil).ClientConfig()
	if err != nil {
		return nil, kubeconfigErrorf("", "is not a usable kubeconfig: %v", err)
	}
	if cfg.ExecProvider != nil {
		cfg.ExecProvider.PluginPolicy = clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyDenyAll}
	}
	cfg.AuthProvider = nil
	return cfg, nil
}

// maxOwnKubeconfig bounds the read of a user's own kubeconfig file by CheckKubeconfigFiles; a larger one is left
// to client-go alone.
const maxOwnKubeconfig = 64 << 20

// CheckKubeconfigFiles refuses the kubeconfig files the user named (the user's own, read as kubectl reads them)
// when client-go's load would fail with a message that may quote them: one that does not decode, or one whose
// names repeat (client-go prints their entries, credentials included). The error names the file and the field,
// and quotes no value. Anything else kubectl accepts passes; files that do not exist or cannot be read as regular
// files are left to client-go, which reports or skips them as kubectl does.
func CheckKubeconfigFiles(paths []string) error {
	for _, path := range paths {
		data, err := bounded.ReadRegularFile(path, maxOwnKubeconfig)
		if err != nil {
			continue
		}
		cfg, err := decodeV1(data)
		if err == nil {
			err = uniqueNames(cfg)
		}
		if err != nil {
			return fmt.Errorf("the kubeconfig %s %w", path, err)
		}
	}
	return nil
}

// loadKubeconfig is clientcmd.Load behind the refusals of what client-go would read one way and a reader
// another, and of what its errors would print credentials in.
func loadKubeconfig(data []byte) (*clientcmdapi.Config, error) {
	if len(data) > maxKubeconfigSize {
		return nil, kubeconfigErrorf("", "is %s long, more than a kubeconfig needs (%s at most)", bounded.FormatSize(int64(len(data))), bounded.FormatSize(maxKubeconfigSize))
	}
	if err := OneDocument(data); err != nil {
		return nil, &KubeconfigError{msg: err.Error()}
	}
	if _, err := decodeV1Kubeconfig(data); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, kubeconfigErrorf("", "is not a kubeconfig: %s", ParseErrorText(err))
	}
	return cfg, nil
}

// v1Decoder decodes a kubeconfig as clientcmd.Load does, up to clientcmd/api/v1: the same serializer over the
// same scheme (clientcmd/api/latest), without the conversion whose errors print entries.
var v1Decoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, clientcmdlatest.Scheme, clientcmdlatest.Scheme, json.SerializerOptions{Yaml: true})

// decodeV1Kubeconfig decodes a kubeconfig into clientcmd/api/v1 as clientcmd.Load does before its conversion,
// refusing a key given twice in one mapping (client-go keeps the last) and a name given twice in a list (the
// conversion refuses it, printing the list).
func decodeV1Kubeconfig(data []byte) (*clientcmdv1.Config, error) {
	if dups := DuplicateKeys(data, isKubeconfigKey); len(dups) > 0 {
		return nil, kubeconfigErrorf(dups[0], "is refused: its %s is given twice; client-go would keep the last, a reader may take the first: give each key once", dups[0])
	}
	cfg, err := decodeV1(data)
	if err != nil {
		return nil, err
	}
	return cfg, uniqueNames(cfg)
}

// decodeV1 is clientcmd.Load's decoding, up to clientcmd/api/v1.
func decodeV1(data []byte) (*clientcmdv1.Config, error) {
	cfg := &clientcmdv1.Config{}
	if len(data) == 0 {
		return cfg, nil
	}
	obj, _, err := v1Decoder.Decode(data, &schema.GroupVersionKind{Version: clientcmdlatest.Version, Kind: "Config"}, cfg)
	if runtime.IsNotRegisteredError(err) {
		return nil, kubeconfigErrorf("kind", "is not a kubeconfig: it is of another apiVersion or kind than v1, Config")
	}
	if err != nil {
		return nil, kubeconfigErrorf("", "is not a kubeconfig (YAML or JSON, or base64 of either): %s", ParseErrorText(err))
	}
	decoded, ok := obj.(*clientcmdv1.Config)
	if !ok {
		return nil, kubeconfigErrorf("kind", "is not a kubeconfig: it is of another apiVersion or kind than v1, Config")
	}
	return decoded, nil
}

// uniqueNames refuses a name given twice in any of the kubeconfig's named lists, as client-go's conversion does,
// naming the list and the name but none of the entries.
func uniqueNames(cfg *clientcmdv1.Config) error {
	type list struct {
		field string
		names []string
	}
	var lists []list
	add := func(field string, names []string) { lists = append(lists, list{field, names}) }
	extensions := func(field string, exts []clientcmdv1.NamedExtension) {
		names := make([]string, 0, len(exts))
		for _, e := range exts {
			names = append(names, e.Name)
		}
		add(field, names)
	}
	var clusters, users, contexts []string
	for i, c := range cfg.Clusters {
		clusters = append(clusters, c.Name)
		extensions(fmt.Sprintf("clusters[%d].cluster.extensions", i), c.Cluster.Extensions)
	}
	for i, u := range cfg.AuthInfos {
		users = append(users, u.Name)
		extensions(fmt.Sprintf("users[%d].user.extensions", i), u.AuthInfo.Extensions)
	}
	for i, c := range cfg.Contexts {
		contexts = append(contexts, c.Name)
		extensions(fmt.Sprintf("contexts[%d].context.extensions", i), c.Context.Extensions)
	}
	add("clusters", clusters)
	add("users", users)
	add("contexts", contexts)
	extensions("extensions", cfg.Extensions)
	extensions("preferences.extensions", cfg.Preferences.Extensions)
	var (
		field    string
		problems []string
	)
	for _, l := range lists {
		seen := map[string]bool{}
		for _, name := range l.names {
			if seen[name] {
				if field == "" {
					field = l.field
				}
				problems = append(problems, fmt.Sprintf("two of its %s are named %q", l.field, name))
				break
			}
			seen[name] = true
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return kubeconfigErrorf(field, "is refused: %s; client-go refuses a kubeconfig whose names repeat: give each entry its own name",
		strings.Join(problems, ", "))
}

// chooseAsClientGo decides the context, user and cluster as NewDefaultClientConfig with no overrides does (see
// above), refusing every case where client-go would fall back on an entry named "" or on none.
func chooseAsClientGo(all *clientcmdapi.Config) (*ContentKubeconfig, error) {
	name := all.CurrentContext
	ctx, found := all.Contexts[name]
	switch {
	case name == "":
		return nil, kubeconfigErrorf("current-context", `is refused: it sets no current-context, so client-go would take the user and the cluster named "" (or none): set current-context to the context to use`)
	case !found:
		return nil, kubeconfigErrorf("current-context", `is refused: its current-context %q is none of its contexts, so client-go would take the user and the cluster named "" (or none): set current-context to one of its contexts`, name)
	}
	var problems []string
	if ctx.AuthInfo == "" {
		problems = append(problems, fmt.Sprintf(`its context %q names no user, so client-go would take the user named "" (or none)`, name))
	} else if all.AuthInfos[ctx.AuthInfo] == nil {
		problems = append(problems, fmt.Sprintf("its context %q names the user %q, which is none of its users, so client-go would send no credential", name, ctx.AuthInfo))
	}
	if ctx.Cluster == "" {
		problems = append(problems, fmt.Sprintf(`its context %q names no cluster, so client-go would take the cluster named "" (or none)`, name))
	} else if all.Clusters[ctx.Cluster] == nil {
		problems = append(problems, fmt.Sprintf("its context %q names the cluster %q, which is none of its clusters", name, ctx.Cluster))
	}
	if len(problems) > 0 {
		return nil, kubeconfigErrorf(fmt.Sprintf("contexts[%s]", name), "is refused: %s: name a user and a cluster of the kubeconfig in the current context", strings.Join(problems, "; "))
	}
	chosen := clientcmdapi.NewConfig()
	chosen.CurrentContext = name
	chosen.Contexts[name] = ctx.DeepCopy()
	chosen.AuthInfos[ctx.AuthInfo] = all.AuthInfos[ctx.AuthInfo].DeepCopy()
	chosen.Clusters[ctx.Cluster] = all.Clusters[ctx.Cluster].DeepCopy()
	return &ContentKubeconfig{Context: name, User: ctx.AuthInfo, Cluster: ctx.Cluster, All: all, Chosen: chosen}, nil
}
