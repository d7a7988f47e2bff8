package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/connection"
	"github.com/harvester/docker-machine-driver-harvester/harvester/guestaccount"
)

// cloudProviderConfig runs `docker-machine-driver-harvester cloud-provider-config` (under a second name, with that
// name's credential variable), which replaces harvester/cloud-provider-harvester's generate_addon.sh: it makes
// (idempotently) the scoped identity a guest cluster's Harvester cloud provider and CSI driver use
// (guestaccount.EnsureWith), and prints its kubeconfig. Exit code 2 for a malformed command line, 1 for any other failure.
func cloudProviderConfig(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	// The credential variable of this executable's driver name only: $HCIVM_KUBECONFIG_CONTENT under hcivm, never
	// another name's (Rancher's job sets <DRIVER>_KUBECONFIG_CONTENT, args.go getArgsEnvAndStatus).
	credentialEnv := self.EnvVar(config.FlagKubeconfigContent)
	fs := flag.NewFlagSet("cloud-provider-config", flag.ContinueOnError)
	fs.SetOutput(redacted{stderr}) // the flag package quotes the values it cannot parse
	kubeconfigPath := fs.String("kubeconfig", "", "Harvester kubeconfig file (default: $"+credentialEnv+", else $KUBECONFIG or ~/.kube/config)")
	namespace := fs.String("namespace", "", "the guest cluster's VM namespace in Harvester (required)")
	clusterName := fs.String("cluster-name", "", "the guest cluster's name (required); labels the objects and names them unless --service-account is given")
	account := fs.String("service-account", "", "name of the service account (default: <cluster-name>-cloud-provider)")
	server := fs.String("server", "", "Harvester's API as the guests reach it, https://<Harvester VIP>:6443 (default: discovered from Harvester)")
	output := fs.String("output", "kubeconfig", "kubeconfig, or cloud-init: a #cloud-config writing it to the guest's cloud provider paths")
	distribution := fs.String("distribution", config.DefaultDistribution, "with --output cloud-init: the guest's Kubernetes distribution, rke2 or k3s (where the kubeconfig goes)")
	dropIn := fs.Bool("drop-in", false, "with --output cloud-init: also write the distribution's config drop-in that turns the Harvester cloud provider on")
	forRKE2 := fs.Bool("rke2", false, "the same as --distribution rke2 --drop-in")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: "+program()+` cloud-provider-config --namespace NS --cluster-name NAME [flags]

Creates (or finds) the service account NAME-cloud-provider a guest cluster's Harvester cloud provider and CSI
driver use, with roles of its own that allow what they call in NS (and their NetworkFilesystems in
harvester-system, storage classes, volume attachments and three settings), and prints its kubeconfig. The token
does not expire: delete its Secret and run this again to replace it. Objects of those names that the driver did
not make are refused. Put the kubeconfig in the guest at
/var/lib/rancher/rke2/etc/config-files/cloud-provider-config (RKE2),
/var/lib/rancher/k3s/etc/config-files/cloud-provider-config (K3s) or /etc/kubernetes/cloud-config.

`)
		fs.PrintDefaults()
	}
	// Every problem of the command line at once, as the flags of a create are told.
	problems := &config.ArgsError{Problems: config.ParseFlagSet(fs, args)}
	if len(problems.Problems) == 1 && problems.Problems[0] == flag.ErrHelp.Error() {
		return 2 // -h: fs.Usage has printed the help
	}
	if *forRKE2 {
		*dropIn = true
	}
	dist, distErr := config.LookupDistribution(*distribution)
	if distErr != nil {
		problems.Problemf("--distribution %s", distErr.Error())
	}
	for _, name := range []struct {
		flag, value string
		check       func(string) error
	}{{"cluster-name", *clusterName, config.CheckGuestClusterName}, {"service-account", *account, config.CheckCloudProviderAccountName}} {
		if name.value == "" {
			continue
		}
		if err := name.check(name.value); err != nil {
			problems.Problemf("--%s %s", name.flag, err.Error())
		}
	}
	if *namespace == "" {
		problems.Problemf("--namespace is required: the guest cluster's VM namespace in Harvester")
	}
	if *clusterName == "" {
		problems.Problemf("--cluster-name is required: the guest cluster's name, which names and labels its account")
	}
	if *output != "kubeconfig" && *output != "cloud-init" {
		problems.Problemf("--output must be kubeconfig or cloud-init, got %q", *output)
	}
	if *forRKE2 && *distribution != "rke2" {
		problems.Problemf("--rke2 is --distribution rke2 --drop-in, and --distribution is %q: give one of them", *distribution)
	}
	if len(problems.Problems) > 0 {
		fmt.Fprintf(stderr, "cloud-provider-config: %s\nusage: %s cloud-provider-config --namespace NS --cluster-name NAME [flags] (-h lists them)\n",
			named(problems.Error()), program())
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "cloud-provider-config: %s\n", named(err.Error()))
		return 1
	}

	// The credential: the file given (the user's own, read as $KUBECONFIG is), else the driver's environment
	// variable (content: inline credentials only), else $KUBECONFIG.
	credential := connection.Credential{Path: *kubeconfigPath}
	if v, ok := lookupEnv(credentialEnv); ok && v != "" && *kubeconfigPath == "" {
		data, err := config.DecodeKubeconfig(v)
		if err != nil {
			return fail(fmt.Errorf("$%s: %v", credentialEnv, err))
		}
		credential.Content = data
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kubeconfig, err := guestaccount.EnsureWith(ctx, credential,
		guestaccount.Account{Namespace: *namespace, Cluster: *clusterName, ServiceAccount: *account, Server: *server})
	if err != nil {
		return fail(err)
	}
	out := kubeconfig
	if *output == "cloud-init" {
		if out, err = guestaccount.CloudConfig(kubeconfig, dist, *dropIn); err != nil {
			return fail(err)
		}
	}
	if _, err := stdout.Write(out); err != nil {
		return fail(err)
	}
	return 0
}

// redacted is a writer whose every message passes config.Redact: what the flag package writes of a command line
// it cannot parse. One message is one Write (fmt writes each call at once).
type redacted struct{ w io.Writer }

func (r redacted) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, config.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
