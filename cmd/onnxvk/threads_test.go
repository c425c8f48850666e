package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThreadsFlag: bench --threads N records the session's budget, and a
// negative --threads is a usage error on run and bench.
func TestThreadsFlag(t *testing.T) {
	model := exampleFile(t)
	code, out, errOut := cli(t, "bench", model, "--device", "cpu", "--threads", "1", "--runs", "1", "--warmup", "0", "--json")
	require.Equal(t, 0, code, errOut)
	var res benchResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, 1, res.Threads)
	for _, cmd := range []string{"run", "bench"} {
		code, _, errOut = cli(t, cmd, model, "--threads", "-1")
		require.Equal(t, 2, code, cmd)
		require.Contains(t, errOut, "--threads -1", cmd)
	}
}
