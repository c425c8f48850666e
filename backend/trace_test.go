package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
)

// TestTraceChrome checks that events recorded from several goroutines come
// back by start time and that the Chrome JSON has one named track per
// device, slices in microseconds and the device time where measured.
func TestTraceChrome(t *testing.T) {
	tr := backend.NewTrace()
	ctx := backend.WithTrace(context.Background(), tr)
	require.Same(t, tr, backend.TraceFrom(ctx))
	require.Nil(t, backend.TraceFrom(context.Background()))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := []string{"cpu", "vulkan:0"}[i%2]
			backend.TraceFrom(ctx).Add(backend.TraceEvent{Name: "n", Op: "Relu", Device: dev, Start: time.Duration(8-i) * time.Millisecond,
				Dur: 1500 * time.Microsecond, DeviceDur: time.Duration(i%2) * time.Millisecond})
		}()
	}
	wg.Wait()
	evs := tr.Events()
	require.Len(t, evs, 8)
	for i := 1; i < len(evs); i++ {
		require.LessOrEqual(t, evs[i-1].Start, evs[i].Start)
	}
	var buf bytes.Buffer
	require.NoError(t, tr.WriteChrome(&buf))
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Dur  float64        `json:"dur"`
			Tid  int            `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	tracks := map[int]string{}
	slices := 0
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "M":
			tracks[ev.Tid] = ev.Args["name"].(string)
		case "X":
			slices++
			require.Equal(t, 1500.0, ev.Dur)
			dev := tracks[ev.Tid]
			require.Equal(t, dev, ev.Args["device"])
			_, hasDevice := ev.Args["device_us"]
			require.Equal(t, dev == "vulkan:0", hasDevice, "device time only where measured")
		}
	}
	require.Equal(t, 8, slices)
	require.ElementsMatch(t, []string{"cpu", "vulkan:0"}, []string{tracks[1], tracks[2]})
}
