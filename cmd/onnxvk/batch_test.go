package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunProfileBatch profiles 6 pipelined requests of the staged model on
// two logical devices of the CPU: the trace has one track per logical
// device, every request appears on both, and the overlap is printed.
func TestRunProfileBatch(t *testing.T) {
	model := stagedModelFile(t)
	trace := filepath.Join(t.TempDir(), "trace.json")
	code, out, errOut := cli(t, "run", model, "--devices", "cpu,cpu", "--profile", trace, "--batch", "6")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "profile of 6 pipelined requests written to "+trace+": the devices overlap ")
	raw, err := os.ReadFile(trace)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Tid      int
			Args     map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	tracks := map[int]string{}
	requests := map[string]map[float64]bool{}
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "M":
			tracks[ev.Tid] = ev.Args["name"].(string)
			requests[tracks[ev.Tid]] = map[float64]bool{}
		case "X":
			require.Equal(t, "cpu", ev.Args["device"], ev.Name)
			requests[tracks[ev.Tid]][ev.Args["request"].(float64)] = true
		}
	}
	require.ElementsMatch(t, []string{"d0", "d1"}, []string{tracks[1], tracks[2]})
	require.Len(t, requests["d0"], 6)
	require.Len(t, requests["d1"], 6)

	code, _, errOut = cli(t, "run", model, "--devices", "cpu,cpu", "--profile", trace, "--batch", "0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--batch 0: want at least 1")
}
