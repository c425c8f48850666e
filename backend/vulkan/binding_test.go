package vulkan

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

// BenchmarkClassProgramBinding times the host's work for a new binding of
// the class program of the test decoders' decode steps (testdata/torch/export.py;
// one token, the past length P symbolic): lowering and compiling the
// segment for the binding's sizes and recording a context's command
// buffer for it, the GPU's work left out. It cycles over maxBindings+1
// past lengths, so that no binding is among those the class program
// keeps:
// go test -run '^$' -bench ClassProgramBinding -count 6 ./backend/vulkan/
func BenchmarkClassProgramBinding(b *testing.B) {
	root := filepath.Join("..", "..")
	cache := torchmodels.Cache(b, root)
	names := []string{"decoder_small", "decoder"}
	torchmodels.Export(b, root, cache, names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			d := openTest(b)
			c, frames := decodeStepClass(b, d, filepath.Join(cache, name, "model.onnx"), maxBindings+1)
			ec, err := c.contexts.get(d.dev, c.newContext, c.released)
			if err != nil {
				b.Fatal(err)
			}
			defer c.contexts.put(ec)
			i := 0
			for b.Loop() {
				pr, err := c.program(frames[i%len(frames)])
				if err != nil {
					b.Fatal(err)
				}
				if err := pr.rebind(ec); err != nil {
					b.Fatal(err)
				}
				c.done(pr)
				i++
			}
			b.StopTimer()
			if c.lowered < b.N {
				b.Fatalf("%d bindings lowered in %d runs", c.lowered, b.N)
			}
		})
	}
}

// TestClassProgramReusesLaunches compiles a binding of the small test
// decoder's decode-step class program on a class program that has
// lowered other bindings (and reuses the launches of the steps whose
// inputs those left unchanged, see lowerStep) and on a fresh one: both
// give the same dispatches (pipelines, push constants, workgroups,
// barriers, and bindings but for the weights' places, as the constants
// each program computes are its own). It runs in the long suites: its
// export of the model would start PyTorch a second time beside the root
// package's tests, which export it too and decode with reused launches
// outside them.
func TestClassProgramReusesLaunches(t *testing.T) {
	testenv.SkipLong(t)
	root := filepath.Join("..", "..")
	cache := torchmodels.Cache(t, root)
	torchmodels.Export(t, root, cache, []string{"decoder_small"})
	model := filepath.Join(cache, "decoder_small", "model.onnx")
	d := openTest(t)
	warm, frames := decodeStepClass(t, d, model, 3)
	for _, f := range frames[:2] {
		pr, err := warm.program(f)
		require.NoError(t, err)
		warm.done(pr)
	}
	reused, err := warm.program(frames[2])
	require.NoError(t, err)
	defer warm.done(reused)
	fresh, freshFrames := decodeStepClass(t, d, model, 3)
	want, err := fresh.program(freshFrames[2])
	require.NoError(t, err)
	defer fresh.done(want)
	require.Len(t, reused.dispatches, len(want.dispatches))
	for i, w := range want.dispatches {
		g := reused.dispatches[i]
		require.Same(t, w.pipe, g.pipe, "pipeline of dispatch %d", i)
		require.Equal(t, [2]any{w.push, w.groups}, [2]any{g.push, g.groups}, "push constants and workgroups of dispatch %d", i)
		require.Equal(t, [2]any{w.barrier, w.node}, [2]any{g.barrier, g.node}, "barrier and node of dispatch %d", i)
		require.True(t, slices.EqualFunc(w.bindings, g.bindings, func(a, b loc) bool {
			return a.region == b.region && a.size == b.size && (a.region == inWeight || a.off == b.off)
		}), "bindings of dispatch %d: %v, want %v", i, g.bindings, w.bindings)
	}
	require.Equal(t, [2]uint64{want.arenaSize, want.ioSize}, [2]uint64{reused.arenaSize, reused.ioSize})
}

// decodeStepClass plans the decoder model on d for decode steps (ids
// [1, 1], the past length symbolic up to 64) and returns its one class
// program, sized for the largest past length, and frames of n past
// lengths from 8 whose inputs have the binding's sizes (zeros).
func decodeStepClass(b testing.TB, d *Device, model string, n int) (*classProgram, []*backend.Frame) {
	b.Helper()
	m, err := loader.Load(model)
	if err != nil {
		b.Fatal(err)
	}
	opts := planner.Options{Devices: []planner.Device{d, hostfallback.NewDevice(nil)},
		Inputs: map[string]*graph.Type{"ids": graph.TensorType(graph.Int64, graph.ShapeOf(1, 1))}, DimMax: map[string]int64{"P": 64}}
	p, err := planner.New(m, opts)
	if err != nil {
		b.Fatal(err)
	}
	// The segment is the plan's steps from the first that d computes to
	// the last: the class plan of decode steps places every node on d, so
	// only the transfers of its inputs and outputs lie outside.
	first, last := -1, -1
	for i, st := range p.Steps {
		if st.Kind == planner.Compute {
			if st.Device != d.Name() {
				b.Fatalf("%s is placed on %s", st.Node, st.Device)
			}
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	prog, err := d.Compile(p, p.Steps[first:last+1])
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(prog.(backend.Releaser).Release)
	c, ok := prog.(*classProgram)
	if !ok {
		b.Fatalf("the decode steps' segment of %s is not a class program", model)
	}
	c.sized.Do(c.size)
	frames := make([]*backend.Frame, n)
	for i := range frames {
		vals := make([]graph.Value, len(p.Values))
		for _, v := range c.sym {
			t := p.Types[v]
			if p.ShapeOnly(v) || t.Shape == nil {
				b.Fatalf("input %s of the class program is not a tensor of known rank", p.Values[v])
			}
			shape := make([]int64, len(t.Shape))
			for k, dim := range t.Shape {
				shape[k] = dim.Value
				if !dim.Known() {
					shape[k] = int64(8 + i)
				}
			}
			vals[v] = graph.NewTensor(t.Elem, shape)
		}
		frames[i] = &backend.Frame{Plan: p, Values: map[string][]graph.Value{d.Name(): vals}}
	}
	return c, frames
}
