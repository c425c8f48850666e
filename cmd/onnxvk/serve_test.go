package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestServeUsage checks serve's usage errors (exit 2) and that a model
// that does not load fails (exit 1) before anything listens.
func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "no model given"},
		{[]string{"--log-level", "loud", "m.onnx"}, "--log-level"},
		{[]string{"--max-request-size", "lots", "m.onnx"}, "--max-request-size"},
		{[]string{"--http", "", "m.onnx"}, "no frontend"},
		{[]string{"--host-memory", "x", "m.onnx"}, "--host-memory"},
	} {
		code, _, errOut := cli(t, append([]string{"serve"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.msg)
	}
	code, _, errOut := cli(t, "serve", "--http", "127.0.0.1:0", t.TempDir()+"/missing.onnx")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "missing.onnx")
}
