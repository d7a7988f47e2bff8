package rancher

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/rancher/machine/libmachine/mcnflag"
)

// Field is one field of a driver's machine-config object as Rancher declares it.
type Field struct {
	Name string
	// Type is Rancher's schema type: string (int flags too), password, boolean or array[string].
	Type string
	// Default is the field's default in the machine-config CRD, nil for none. Every string, int and bool flag
	// declares one, its zero value included ("", "0", false); only a string-slice flag without a value
	// declares none.
	Default     any
	Description string
}

// PasswordFields are the fields Rancher types as password for driver harvester: its private credential field
// (pkg/data/management/machinedriver_data.go, DriverData[HarvesterDriver]) and Rancher's SSH key fields
// (pkg/controllers/management/drivers/nodedriver/machine_driver.go, SSHKeyFields).
var PasswordFields = map[string]bool{"kubeconfigContent": true, "sshKeyContents": true, "sshKey": true, "privateKeyFile": true}

// declared is Rancher's v3.Values (pkg/apis/management.cattle.io/v3/schema_types.go): the default a flag
// declares, one member per kind. No member is omitempty, so all four reach the dynamic schema, zero or not.
type declared struct {
	stringValue      string
	boolValue        bool
	stringSliceValue []string // nil marshals as null
}

// FieldOf is the field Rancher makes of a flag: FlagToField (nodedriver/utils.go) for the name, the type and
// the declared default; the NodeDriver lifecycle's schema step (machine_driver.go) for the password type;
// getConfigSchemas (pkg/controllers/capr/dynamicschema/dynamicschema.go) for the member of the declared
// default that the machine-config CRD gets: stringValue for string and password fields, boolValue for boolean
// ones, stringSliceValue for array[string] ones.
func FieldOf(flag mcnflag.Flag) (Field, error) {
	name, err := FieldName(flag.String())
	if err != nil {
		return Field{}, err
	}
	f := Field{Name: name, Type: "string"}
	var d declared
	switch v := flag.(type) {
	case *mcnflag.StringFlag:
		f.Description, d.stringValue = v.Usage, v.Value
	case *mcnflag.IntFlag:
		// "This will make the int flag appear as a string field in the rancher API" (FlagToField).
		f.Description, d.stringValue = v.Usage, strconv.Itoa(v.Value)
	case *mcnflag.BoolFlag:
		f.Type, f.Description = "boolean", v.Usage
	case *mcnflag.StringSliceFlag:
		f.Type, f.Description, d.stringSliceValue = "array[string]", v.Usage, v.Value
	default:
		return Field{}, fmt.Errorf("unknown type of flag %v: %v", flag, reflect.TypeOf(flag))
	}
	if PasswordFields[name] {
		f.Type = "password"
	}
	switch f.Type {
	case "string", "password":
		f.Default = d.stringValue
	case "boolean":
		f.Default = d.boolValue
	case "array[string]":
		if d.stringSliceValue != nil {
			f.Default = append([]string{}, d.stringSliceValue...)
		}
	}
	return f, nil
}

// FieldsOf is FieldOf of every flag, in order.
func FieldsOf(flags []mcnflag.Flag) ([]Field, error) {
	fields := make([]Field, 0, len(flags))
	for _, fl := range flags {
		f, err := FieldOf(fl)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}
