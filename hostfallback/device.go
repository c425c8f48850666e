package hostfallback

import (
	"context"
	"fmt"
	"time"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// Device is the CPU device. It runs every op that has a kernel here, its
// kernels' parallel loops within its thread budget.
type Device struct {
	threads *Threads
}

// NewDevice returns a CPU device whose kernels run within the thread
// budget threads (nil: the whole pool).
func NewDevice(threads *Threads) *Device { return &Device{threads: threads} }

// Name returns "cpu".
func (*Device) Name() string { return planner.HostDevice }

// Supports reports whether a kernel exists for n's op that accepts its
// input types, attributes and constant inputs (see Decline).
func (*Device) Supports(q planner.Query) bool { return Decline(q) == "" }

// Decline returns why the CPU cannot run the node q describes, or "".
func (*Device) Decline(q planner.Query) string { return Decline(q) }

// Upload returns v: host values are already on the CPU.
func (*Device) Upload(v graph.Value) (graph.Value, error) { return v, nil }

// Download returns v: host values are already on the CPU.
func (*Device) Download(v graph.Value) (graph.Value, error) { return v, nil }

// Close does nothing; the CPU device holds no resources.
func (*Device) Close() error { return nil }

// Compile binds each step to its kernel and arena slots.
func (d *Device) Compile(p *planner.Plan, steps []planner.Step) (backend.Program, error) {
	prog := &program{plan: p, threads: d.threads, steps: make([]cpuStep, len(steps))}
	for i := range steps {
		st := &steps[i]
		k := Lookup(st.Node.Domain, st.Node.OpType)
		if k == nil {
			return nil, fmt.Errorf("hostfallback: %s: no CPU kernel", st.Node)
		}
		cs := cpuStep{Step: st, kernel: k, slots: make([]*planner.Buffer, len(st.Out)), memo: new(stepMemo), consts: make([]bool, len(st.In))}
		for j, t := range p.Query(st).Consts {
			cs.consts[j] = t != nil
		}
		for j, v := range st.Out {
			if b := p.Buffers[v]; v >= 0 && b != nil {
				cs.slots[j] = b
			}
		}
		prog.steps[i] = cs
		prog.slots += len(st.In) + len(st.Out)
		prog.outs += len(st.Out)
	}
	return prog, nil
}

type cpuStep struct {
	*planner.Step
	kernel Kernel
	// slots are the outputs' arena buffers (nil: allocated on their own).
	slots []*planner.Buffer
	// memo caches the kernel's plan (see Memo); consts marks the inputs
	// fixed for the plan.
	memo   *stepMemo
	consts []bool
}

type program struct {
	plan    *planner.Plan
	threads *Threads
	steps   []cpuStep
	// slots counts the steps' inputs and outputs, outs their outputs:
	// the sizes of a Run's slabs.
	slots, outs int
}

// Run executes the steps in order, checking ctx before each. The Calls,
// their In and Out slices and the callbacks are made once per Run (the
// program is shared by concurrent Runs) and reused by the steps, which run
// one after the other.
func (pr *program) Run(ctx context.Context, f *backend.Frame) error {
	arena := f.Arenas[planner.HostDevice]
	values := f.Values[planner.HostDevice]
	outer := func(name string) (graph.Value, bool) {
		i, ok := pr.plan.ValueIndex[name]
		if !ok || values[i] == nil {
			return nil, false
		}
		return values[i], true
	}
	var st *cpuStep
	// The arena outputs' Tensor headers and shapes are carved from two
	// slabs per Run rather than allocated one by one.
	headers := make([]graph.Tensor, 0, pr.outs)
	dims := make([]int64, 0, 4*pr.outs)
	alloc := func(k int, dt graph.DType, shape []int64) *graph.Tensor {
		b := st.slots[k]
		if b == nil || b.AliasOf >= 0 || dt.ByteSize(graph.NumElements(shape)) != b.Size {
			return nil
		}
		var sh []int64
		if n := len(dims); n+len(shape) <= cap(dims) {
			dims = append(dims, shape...)
			sh = dims[n:len(dims):len(dims)]
		} else {
			sh = append([]int64{}, shape...)
		}
		data := arena[b.Offset : b.Offset+b.Size : b.Offset+b.Size]
		if len(headers) < cap(headers) {
			headers = append(headers, graph.Tensor{DType: dt, Shape: sh, Data: data})
			return &headers[len(headers)-1]
		}
		return &graph.Tensor{DType: dt, Shape: sh, Data: data}
	}
	limit, planned := pr.plan.HostMemoryLimit, pr.plan.HostBytes
	runGraph := func(g *graph.Graph, inputs []graph.Value) ([]graph.Value, error) {
		return runGraph(ctx, pr.threads, g, pr.plan.Model.Opsets, inputs, outer, limit, planned)
	}
	io := make([]graph.Value, pr.slots)
	c := &Call{Alloc: alloc, RunGraph: runGraph, Threads: pr.threads, limit: limit, planned: planned}
	tr := backend.TraceFrom(ctx)
	var t0 time.Duration
	for i := range pr.steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if tr != nil {
			t0 = tr.Now()
		}
		st = &pr.steps[i]
		nIn, nOut := len(st.In), len(st.Out)
		c.Node, c.Opset, c.memo, c.consts = st.Node, st.Opset, st.memo, st.consts
		c.In, c.Out = io[:nIn:nIn], io[nIn:nIn+nOut:nIn+nOut]
		io = io[nIn+nOut:]
		for k, v := range st.In {
			if v >= 0 {
				c.In[k] = values[v]
			}
		}
		if err := st.kernel(c); err != nil {
			return fmt.Errorf("hostfallback: %w", err)
		}
		for k, v := range st.Out {
			if v < 0 {
				continue
			}
			if c.Out[k] == nil {
				return fmt.Errorf("hostfallback: %s: kernel produced no output %d (%q)", st.Node, k, st.Node.Outputs[k])
			}
			values[v] = ownSlot(c.Out[k], st.slots[k], arena)
		}
		clear(c.In)
		for _, v := range st.Release {
			values[v] = nil
		}
		if tr != nil {
			tr.Add(backend.TraceEvent{Name: st.Node.Name, Op: st.Node.OpType, Device: planner.HostDevice, Start: t0, Dur: tr.Now() - t0})
		}
	}
	return nil
}

// ownSlot returns out, or a heap copy of it when a kernel returned memory
// of the arena that is not out's own slot (a view of an input whose slot
// will be reused); planned views keep sharing their root's slot.
func ownSlot(out graph.Value, slot *planner.Buffer, arena []byte) graph.Value {
	t, ok := out.(*graph.Tensor)
	if !ok || !backend.Overlaps(t.Data, arena) {
		return out
	}
	if slot != nil && (slot.AliasOf >= 0 || &t.Data[0] == &arena[slot.Offset]) {
		return out
	}
	return t.Clone()
}
