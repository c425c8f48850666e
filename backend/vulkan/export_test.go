package vulkan

import (
	"maps"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// CompileOn plans m on d, the CPU taking what d declines, and compiles
// the steps d computes into one Program; steps are those steps and f a
// frame to run it with, whose inputs the caller sets.
func CompileOn(t testing.TB, d *Device, m *graph.Model) (prog backend.Program, steps []planner.Step, f *backend.Frame) {
	t.Helper()
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, hostfallback.NewDevice(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device == d.Name() {
			steps = append(steps, st)
		}
	}
	if prog, err = d.Compile(p, steps); err != nil {
		t.Fatal(err)
	}
	return prog, steps, &backend.Frame{Plan: p, Values: map[string][]graph.Value{d.Name(): make([]graph.Value, len(p.Values))}}
}

// ElementwiseOps returns the ONNX ops that unary.comp and binary.comp run,
// each sorted: those chain.comp fuses.
func ElementwiseOps() (unary, binary []string) {
	return slices.Sorted(maps.Keys(unaryOps)), slices.Sorted(maps.Keys(binaryOps))
}
