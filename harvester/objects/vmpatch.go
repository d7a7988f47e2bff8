package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/harvester/docker-machine-driver-harvester/harvester/config"
	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/quantity"
	"github.com/harvester/docker-machine-driver-harvester/internal/bounded"
)

// MaxPatchedVM is the most a VM patched by --harvester-vm-patch may hold, as JSON: far more than any VM needs
// (the driver's are a few KiB) and less than the 1.5 MiB etcd stores. It also bounds what the copy operations of
// a JSON patch may add, so that the work of a patch stays in proportion to its size.
const MaxPatchedVM = 1 << 20

// patchVM applies --harvester-vm-patch (cfg.VMPatch) to vm, the VM the driver built, and returns the patched VM,
// or vm itself without a patch; static says the first NIC gets a static address of --harvester-ip-pool or a lease
// of --harvester-ip-pool-name (its MAC address is then the driver's). The patch is applied to the VM as JSON, as the API server applies a patch
// (k8s.io/apiserver pkg/endpoints/handlers/patch.go, applyJSPatch, with the same library,
// gopkg.in/evanphx/json-patch.v4), and the result is read back as a KubeVirt VirtualMachine strictly, its
// quantities bounded before any is parsed (readVM).
// Then the driver's own parts (ownedParts) must be as it built them. Problems are filed under --harvester-vm-patch, naming paths and operations, never a value; nil is
// returned then.
func patchVM(p *config.Problems, vm *kubevirtv1.VirtualMachine, patch *config.VMPatch, static bool) *kubevirtv1.VirtualMachine {
	if patch == nil {
		return vm
	}
	doc, err := json.Marshal(vm)
	if err != nil {
		p.Addf(config.FlagVMPatch, "cannot apply: the VM the driver built does not encode: %v", err)
		return nil
	}
	if patch.Kind == config.JSONPatch {
		doc, err = applyJSONPatch(doc, patch.Data)
	} else {
		if doc, err = withoutPanic(func() ([]byte, error) { return jsonpatch.MergePatch(doc, patch.Data) }); err != nil {
			err = fmt.Errorf("does not apply to the VM the driver builds: %v", err)
		}
	}
	if err == nil && len(doc) > MaxPatchedVM {
		err = fmt.Errorf("makes the VM %s as JSON, over the %s a patched VM may hold", bounded.FormatSize(int64(len(doc))), bounded.FormatSize(MaxPatchedVM))
	}
	if err != nil {
		p.Addf(config.FlagVMPatch, "%s %v", patch.Kind, err)
		return nil
	}
	out, err := readVM(doc)
	var bad *quantity.Error
	switch {
	case errors.As(err, &bad):
		p.Addf(config.FlagVMPatch, "the patched VM holds a quantity the driver will not parse: %s %s; write it as Kubernetes does (4Gi, 500m, 1e3)", bad.Field, bad.Reason)
		return nil
	case err != nil:
		p.Addf(config.FlagVMPatch, "the patched VM is not a KubeVirt VirtualMachine: %v", err)
		return nil
	}
	if changed := changedParts(vm, out, static); len(changed) > 0 {
		p.Addf(config.FlagVMPatch, "changes what the driver owns: %s. The driver names, labels and annotates its VMs, gives them their cloud-init "+
			"and their disks' claims, and starts and stops them; patch other fields", strings.Join(changed, ", "))
		return nil
	}
	if copied := copiedFacts(vm, out); len(copied) > 0 {
		p.Addf(config.FlagVMPatch, "copies %s out of the driver's parts: only the create knows them, so the copy would hold a placeholder; patch other fields",
			strings.Join(copied, " and "))
		return nil
	}
	if beyond := beyondGuest(out); len(beyond) > 0 {
		p.Addf(config.FlagVMPatch, "gives the VM what no patch may: %s. A patch may not reach beyond the guest's own disks into the host, "+
			"virt-launcher or other claims", strings.Join(beyond, ", "))
		return nil
	}
	return out
}

// createFacts are the placeholders the VM a patch applies to holds, in the driver's own parts, for what only a
// create knows (Build, Machine.Complete), with what each stands for.
var createFacts = []struct{ placeholder, what string }{
	{placeholderPVCSuffix, "a claim's name"},
	{classPlaceholderPrefix, "an image's storage class"},
}

// copiedFacts names what only a create knows that patched holds more often than built, the VM the patch applied
// to: a copy of a claim's name or an image's storage class, out of the parts the driver owns (which no patch
// changes, changedParts). Complete fills in those parts and no other: the copy would keep the placeholder.
func copiedFacts(built, patched *kubevirtv1.VirtualMachine) []string {
	before, _ := json.Marshal(built) // API types always encode
	after, _ := json.Marshal(patched)
	var out []string
	for _, f := range createFacts {
		placeholder, _ := json.Marshal(f.placeholder) // as the VM's JSON holds it
		p := bytes.Trim(placeholder, `"`)
		if bytes.Count(after, p) > bytes.Count(before, p) {
			out = append(out, f.what)
		}
	}
	return out
}

// applyJSONPatch applies a JSON patch to doc in one pass, as the API server does: json-patch decodes only the
// parts of the VM the operations reach and encodes the VM once, however many operations there are. What copy
// operations add is bounded (limitCopies), so a chain of copies cannot double the VM again and again. When an
// operation does not apply, the shortest failing prefix of the patch, found by bisection, names it. The
// operations were checked when the flag was parsed (config.VMPatch).
func applyJSONPatch(doc, data []byte) ([]byte, error) {
	ops, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return nil, errors.New("is not a list of operations")
	}
	limitCopies()
	apply := func(n int) ([]byte, error) {
		return withoutPanic(func() ([]byte, error) { return ops[:n].Apply(doc) })
	}
	out, err := apply(len(ops))
	if err == nil {
		return out, nil
	}
	lo, hi := 0, len(ops) // apply(lo) works, apply(hi) fails with opErr
	opErr := err
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, err := apply(mid); err != nil {
			hi, opErr = mid, err
		} else {
			lo = mid
		}
	}
	op := ops[hi-1]
	path, _ := op.Path()
	return nil, fmt.Errorf("operation %d (%s %q) does not apply to the VM the driver builds: %s", hi-1, op.Kind(), path, whyNot(opErr))
}

// copyLimit is limitCopies' once.
var copyLimit sync.Once

// limitCopies bounds what the copy operations of one JSON patch may add to a VM to MaxPatchedVM in all, with
// json-patch's own setting, as the API server sets it (k8s.io/apiserver pkg/server/config.go, from
// JSONPatchMaxCopyBytes): once, keeping a lower bound another user of the library in the process may have set.
func limitCopies() {
	copyLimit.Do(func() {
		for {
			old := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
			if old > 0 && old <= MaxPatchedVM || atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, old, MaxPatchedVM) {
				return
			}
		}
	})
}

// errPanicked is what withoutPanic returns for a panic.
var errPanicked = errors.New("the JSON patch library failed on it")

// withoutPanic runs apply, turning a panic into errPanicked. json-patch panics on some input: v4.13.0 compares a
// test operation's list holding null by calling a method on the null element (patch.go, lazyNode.equal), so
// [{"op":"add","path":"/metadata/annotations/a","value":[null]},{"op":"test","path":"/metadata/annotations/a","value":[null]}]
// would crash the plugin; the API server survives it only because it recovers every request's panic.
func withoutPanic(apply func() ([]byte, error)) (out []byte, err error) {
	defer func() {
		if recover() != nil {
			out, err = nil, errPanicked
		}
	}()
	return apply()
}

// whyNot words why an operation did not apply, from the errors json-patch wraps (its messages repeat paths in
// its own quoting, which config.Redact would not see).
func whyNot(err error) string {
	var copies *jsonpatch.AccumulatedCopySizeError
	switch {
	case errors.Is(err, errPanicked):
		return err.Error()
	case errors.As(err, &copies):
		return fmt.Sprintf("the copies add more than the %s a patched VM may hold", bounded.FormatSize(MaxPatchedVM))
	case errors.Is(err, jsonpatch.ErrTestFailed):
		return "the VM holds another value there"
	case errors.Is(err, jsonpatch.ErrInvalidIndex):
		return "the list has no such index"
	case errors.Is(err, jsonpatch.ErrMissing):
		return "the VM has nothing there (an add needs the object or list it adds to)"
	}
	return "a path goes through a value that is neither an object nor a list, or is not a list index"
}
