// Package bounded reads what someone else wrote within limits, and words sizes for messages: a file a flag names
// is read only if it is a regular file no larger than its limit, without ever blocking (ReadRegularFile); a size
// over a limit is a *SizeError ("it is 3.2 MiB, over the 1 MiB limit"), a size for a message FormatSize's. It
// knows no flag and no format: errors say what was wrong with the input, and the caller says which input it was.
// The kubeconfig, the VM patch, the SSH key and the machine-config readers use it; package userdata decodes user
// data with it.
package bounded
