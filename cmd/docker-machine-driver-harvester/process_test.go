package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rancher/machine/libmachine/log"
	"k8s.io/klog/v2"
)

// client-go's klog lines reach the driver's debug log, with their error and key-value pairs, and nothing else.
func TestClientGoLogsGoToTheDebugLog(t *testing.T) {
	var out, errOut bytes.Buffer
	log.SetOutWriter(&out)
	log.SetErrWriter(&errOut)
	log.SetDebug(true)
	t.Cleanup(func() { log.SetDebug(false) })
	setUpProcess()
	klog.Background().WithName("request").Error(errors.New("body too large"), "Unexpected error when reading response body", "url", "https://h/api")
	klog.Background().Info("Waited before sending request", "delay", "1s")
	got := out.String() + errOut.String()
	for _, want := range []string{
		"client-go: Unexpected error when reading response body: body too large logger=request url=https://h/api",
		"client-go: Waited before sending request delay=1s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the debug log lacks %q:\n%s", want, got)
		}
	}
}
