// Package rancher holds Rancher's rules for a node driver's flags: the field each flag becomes in the driver's
// machine-config object (HarvesterConfig), the CustomResourceDefinition Rancher makes for that object, and the
// command line Rancher builds back from it. Each function is written from the rancher/rancher function it names
// (read at commit 59bd052, 2026-08); none of Rancher's code is imported. Tests import it, and so does the plugin:
// the check verb turns a machine-config object into the command line Rancher would build (check
// --machine-config), after dropping what the pool's copy of the schema lacks (check --cluster; pool.go), and the
// flags verb names each flag's field as Rancher names it (FieldOf).
package rancher

import (
	"fmt"
	"regexp"
	"strings"
)

// FieldName is the machine-config field of a flag, as Rancher names it: the part after the first "-" in
// lowerCamel case (pkg/controllers/management/drivers/nodedriver/utils.go, ToLowerCamelCase, called by
// FlagToField). Rancher indexes an empty part and panics; this returns an error instead.
func FieldName(flag string) (string, error) {
	_, rest, ok := strings.Cut(flag, "-")
	if !ok {
		return "", fmt.Errorf("flag %s does not follow Rancher's naming convention [DRIVER]-[FLAG-NAME]", flag)
	}
	parts := strings.Split(rest, "-")
	name := parts[0]
	for _, p := range parts[1:] {
		if p == "" {
			return "", fmt.Errorf("flag %s has an empty part between '-'", flag)
		}
		name += strings.ToUpper(p[:1]) + p[1:]
	}
	return name, nil
}

// Rule is how Rancher splits a field name back into words for a flag or an environment variable
// (pkg/controllers/capr/machineprovision/args.go, regExHyphen, used by toArgs and getArgsEnvAndStatus).
type Rule struct {
	Name string
	re   *regexp.Regexp
}

var (
	// Before213 is Rancher's rule before 2.13: only a lowercase letter followed by a capital starts a word.
	Before213 = Rule{Name: "Rancher before 2.13", re: regexp.MustCompile("([a-z])([A-Z])")}
	// Since213 is the rule since rancher/rancher#52145 (2.13): a digit followed by a capital starts one too
	// (ipv6AddressCount → ipv6-address-count).
	Since213 = Rule{Name: "Rancher 2.13 and later", re: regexp.MustCompile("([a-z0-9])([A-Z])")}
	// Rules are both rules, oldest first.
	Rules = []Rule{Before213, Since213}
)

// Flag is the command-line flag Rancher passes for a field of driver's config (toArgs): "--<driver>-" and the
// field in kebab case.
func (r Rule) Flag(driver, field string) string {
	return "--" + driver + "-" + strings.ToLower(r.re.ReplaceAllString(field, "${1}-${2}"))
}

// Env is the environment variable Rancher sets for a key of the cloud credential's Secret, the part after the
// key's last "-" (getArgsEnvAndStatus): "<DRIVER>_" and the key in upper snake case. Drivers of
// envNameOverride (amazonec2, openstack, …) use another prefix; harvester has none.
func (r Rule) Env(driver, key string) string {
	if i := strings.LastIndex(key, "-"); i >= 0 {
		key = key[i+1:]
	}
	return strings.ToUpper(driver + "_" + r.re.ReplaceAllString(key, "${1}_${2}"))
}
