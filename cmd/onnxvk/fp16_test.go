package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFP16Flag checks that run and bench report the precision --fp16 got:
// fp32 with the reason on the CPU, fp32 without the flag.
func TestFP16Flag(t *testing.T) {
	model := exampleFile(t)
	code, out, errOut := cli(t, "bench", model, "--device", "cpu", "--fp16", "--runs", "1", "--warmup", "0", "--json", "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Contains(t, r["precision"], "fp32 (fp16 requested: ")

	code, out, errOut = cli(t, "bench", model, "--device", "cpu", "--runs", "1", "--warmup", "0", "--json", "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "fp32", r["precision"])

	code, out, errOut = cli(t, "run", model, "--device", "cpu", "--fp16", "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "precision: fp32 (fp16 requested: ")
}
