package onnxvk

import (
	"context"
	"fmt"
	"math"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// NodeCheck is the comparison of one node's outputs on its device with the
// CPU kernel's on the same inputs.
type NodeCheck struct {
	// Node and Op are the name and op type of the node as planned (after
	// constant folding and fusion: a fused node is named after the nodes
	// it joins).
	Node, Op string
	// Device is the device the plan puts the node on.
	Device string
	// MaxAbs and MaxRel are the largest absolute and relative differences
	// over the node's float outputs; for other element types any
	// difference counts as infinite.
	MaxAbs, MaxRel float64
	// Tol is the op's tolerance (widened by ops.Tolerance.Float16 for a
	// node of float16 outputs); OK tells whether every output element is
	// within it (|got-want| <= Abs + Rel*|want|, NaN matching NaN).
	Tol Tolerance
	OK  bool
}

// Tolerance is how far an op's float outputs on a GPU may be from the CPU
// kernel's: |got-want| <= Abs + Rel*|want|; integer outputs are equal or
// differ by at most Units (QLinearConv and QLinearMatMul, which round a
// float32 product where the CPU kernel rounds a float64 one).
type Tolerance struct {
	Abs, Rel float64
	Units    float64
}

// Verify runs the model on inputs the way Run would place it, node by node:
// it first runs the whole planned graph on the CPU keeping every value,
// then runs each node placed on another device alone on that device, on
// the CPU's values of its inputs, and compares its outputs with the CPU's.
// Each node is thus checked on exact inputs, so an error shows at the node
// that makes it rather than wherever it grows past a tolerance. The checks
// come back in plan order; nodes inside subgraphs are not checked.
func (s *Session) Verify(ctx context.Context, inputs map[string]*Tensor) (_ []NodeCheck, err error) {
	ctx, leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = leave(err) }()
	vals, err := s.tensorValues(inputs, "")
	if err != nil {
		return nil, err
	}
	for name, t := range inputs {
		if t.dev != nil {
			return nil, fmt.Errorf("onnxvk: model %q: verify: input %q is a device tensor; Verify takes host tensors: %w", s.model.Name, name, ErrInputMismatch)
		}
	}
	call, err := s.checkInputs(vals)
	if err != nil {
		return nil, err
	}
	p, err := s.plan(call.types)
	if err != nil {
		return nil, err
	}
	ref, err := referenceValues(ctx, s.threads, p, vals)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: model %q: verify: the CPU run: %w", s.model.Name, err)
	}
	var checks []NodeCheck
	for i := range p.Steps {
		st := &p.Steps[i]
		if st.Kind != planner.Compute || st.Device == planner.HostDevice {
			continue
		}
		c, err := s.checkNode(ctx, p, st, ref)
		if err != nil {
			return checks, fmt.Errorf("onnxvk: model %q: verify: %s: %w", s.model.Name, st.Node, err)
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// referenceValues runs plan p's graph on the CPU and returns every value
// by name: inputs, constants and each node's outputs; its kernels run
// within threads.
func referenceValues(ctx context.Context, threads *hostfallback.Threads, p *planner.Plan, inputs map[string]graph.Value) (map[string]graph.Value, error) {
	g := *p.Graph
	g.Inputs = nil
	var feeds []graph.Value
	for _, in := range p.Graph.Inputs {
		if v, ok := inputs[in.Name]; ok {
			g.Inputs = append(g.Inputs, in)
			feeds = append(feeds, v)
		}
	}
	g.Outputs = nil
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != "" {
				g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
			}
		}
	}
	outs, err := hostfallback.RunGraph(ctx, threads, &g, p.Model.Opsets, feeds, func(string) (graph.Value, bool) { return nil, false })
	if err != nil {
		return nil, err
	}
	vals := make(map[string]graph.Value, len(outs)+len(feeds)+len(g.Initializers))
	for name, t := range g.Initializers {
		vals[name] = t
	}
	for i, in := range g.Inputs {
		vals[in.Name] = feeds[i]
	}
	for i, o := range g.Outputs {
		vals[o.Name] = outs[i]
	}
	return vals, nil
}

// checkNode runs step st's node alone on the session's devices, with its
// constant inputs as constants and the others fed from ref, and compares
// its outputs with ref's.
func (s *Session) checkNode(ctx context.Context, p *planner.Plan, st *planner.Step, ref map[string]graph.Value) (NodeCheck, error) {
	n := st.Node
	q := p.Query(st)
	g := graph.NewGraph(n.Name)
	feeds := map[string]graph.Value{}
	for k, name := range n.Inputs {
		switch {
		case name == "":
		case q.Consts[k] != nil:
			g.Initializers[name] = q.Consts[k]
		default:
			if _, dup := feeds[name]; !dup {
				g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: name, Type: q.Inputs[k]})
			}
			feeds[name] = ref[name]
		}
	}
	for _, o := range n.Outputs {
		if o != "" {
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
		}
	}
	g.Nodes = []*graph.Node{n}
	m := &graph.Model{Name: n.Name, IRVersion: p.Model.IRVersion, Opsets: p.Model.Opsets, Graph: g}
	// The step's own device first: under pipeline stages it need not be
	// the session's first device.
	var devs []planner.Device
	all, _ := s.planOptions(nil, false)
	for _, d := range all.Devices {
		if d.Name() == st.Device {
			devs = append([]planner.Device{d}, devs...)
		} else {
			devs = append(devs, d)
		}
	}
	one, err := planner.New(m, planner.Options{Devices: devs, NoFolding: true})
	if err != nil {
		return NodeCheck{}, err
	}
	ex, err := backend.NewExecutor(one, s.devices)
	if err != nil {
		return NodeCheck{}, err
	}
	defer ex.Release()
	got, err := ex.Run(ctx, feeds)
	if err != nil {
		return NodeCheck{}, err
	}
	tol := ops.DefaultTolerance
	if sc := ops.Lookup(n.Domain, n.OpType, st.Opset); sc != nil {
		tol = sc.Tolerance()
	}
	for _, o := range n.Outputs {
		if t, _ := ref[o].(*graph.Tensor); t != nil && t.DType == graph.Float16 {
			tol = tol.Float16()
			break
		}
	}
	c := NodeCheck{Node: n.Name, Op: n.OpType, Device: st.Device, Tol: Tolerance(tol), OK: true}
	for _, o := range n.Outputs {
		if o == "" {
			continue
		}
		want, _ := ref[o].(*graph.Tensor)
		have, _ := got[o].(*graph.Tensor)
		abs, rel, ok := differ(have, want, tol)
		c.MaxAbs, c.MaxRel, c.OK = max(c.MaxAbs, abs), max(c.MaxRel, rel), c.OK && ok
	}
	return c, nil
}

// differ returns the largest absolute and relative differences of got
// from want and whether every element is within tol. Tensors of other
// shapes or element types, or non-float tensors that differ by more than
// tol.Units, give infinite differences.
func differ(got, want *graph.Tensor, tol ops.Tolerance) (maxAbs, maxRel float64, ok bool) {
	inf := math.Inf(1)
	if got == nil || want == nil || got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return inf, inf, false
	}
	if !got.DType.IsFloat() {
		for i := range got.NumElements() {
			if d := math.Abs(got.Float64At(i) - want.Float64At(i)); !(d <= tol.Units) {
				return inf, inf, false
			} else if d > 0 {
				maxAbs = max(maxAbs, d)
			}
		}
		return maxAbs, 0, true
	}
	ok = true
	for i := range got.NumElements() {
		g, w := got.Float64At(i), want.Float64At(i)
		if math.IsNaN(g) && math.IsNaN(w) || g == w {
			continue
		}
		d := math.Abs(g - w)
		if math.IsNaN(d) {
			d = inf
		}
		maxAbs = max(maxAbs, d)
		if w != 0 {
			maxRel = max(maxRel, d/math.Abs(w))
		}
		if !(d <= tol.Abs+tol.Rel*math.Abs(w)) {
			ok = false
		}
	}
	return maxAbs, maxRel, ok
}
