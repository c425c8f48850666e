package vulkan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// trialSize is the size Supports gives the unknown dimensions of a node's
// input types to ask the lowering whether it takes the node at all.
const trialSize = 5

// maxBindings bounds the programs a class program keeps, one per binding
// of its sizes, the most recently used.
const maxBindings = 4

// trial returns q with trialSize in place of every unknown dimension of
// its input tensor types, and a Reshape's shape that is a shape-only value
// (planner.Plan.ShapeOnly, computed for each binding) as [-1, 1, ...],
// and whether there was either. A type of unknown rank stays as it is
// (the lowering declines it).
func trial(q planner.Query) (planner.Query, bool) {
	sym := false
	n := q.Node
	if n.Domain == graph.DefaultDomain && n.OpType == "Reshape" && len(q.Inputs) > 1 && len(q.ShapeOnly) > 1 && q.ShapeOnly[1] && q.Consts[1] == nil {
		if t := q.Inputs[1]; known(t) && len(t.Shape) == 1 && t.Shape[0].Value > 0 {
			shape := make([]int64, t.Shape[0].Value)
			for i := range shape {
				shape[i] = 1
			}
			shape[0] = -1
			q.Consts = slices.Clone(q.Consts)
			q.Consts[1], _ = graph.FromSlice(graph.Int64, []int64{int64(len(shape))}, shape)
			sym = true
		}
	}
	ins := slices.Clone(q.Inputs)
	for k, t := range ins {
		if t == nil || t.Kind != graph.TensorKind || t.Shape == nil || t.Shape.Known() {
			continue
		}
		c := *t
		c.Shape = slices.Clone(t.Shape)
		for i, d := range c.Shape {
			if !d.Known() {
				c.Shape[i] = graph.DimOf(trialSize)
			}
		}
		ins[k], sym = &c, true
	}
	q.Inputs = ins
	return q, sym
}

// queryOf is p.Query(st) with the input types of p.Types and the
// constants of p: a class program's copy of its plan has the sizes of one
// binding there, and the shape values computed for it (see
// evaluateShapes).
func queryOf(p *planner.Plan, st *planner.Step) planner.Query {
	return boundQuery(p, st, p.Query(st))
}

// boundQuery is queryOf from q, the query p.Query gives for st, which it
// leaves as it is: a class program keeps its steps' queries, which only
// depend on the graph, and binds them to each binding's plan.
func boundQuery(p *planner.Plan, st *planner.Step, q planner.Query) planner.Query {
	q.Inputs, q.Consts = slices.Clone(q.Inputs), slices.Clone(q.Consts)
	for k, v := range st.In {
		if k >= len(q.Inputs) || v < 0 {
			continue
		}
		if c := p.Fixed(v); c != nil {
			q.Inputs[k], q.Consts[k] = c.ValueType(), c
		} else if q.Inputs[k] != nil && v < len(p.Types) {
			q.Inputs[k] = p.Types[v]
		}
	}
	return q
}

// known reports whether t is a tensor type of known shape.
func known(t *graph.Type) bool {
	return t != nil && t.Kind == graph.TensorKind && t.Shape != nil && t.Shape.Known()
}

// symbolicInputs returns, for a segment of a class plan where some value
// a step reads or writes has unknown sizes, the values the segment reads
// from outside whose sizes are unknown or which are shape-only
// (planner.Plan.ShapeOnly: their values are part of the binding; possibly
// none, not nil); nil when every size is known and no shape-only value
// enters. A value the plan does not have is left to compile, which
// reports it.
func symbolicInputs(p *planner.Plan, steps []planner.Step) []int {
	sym := false
	made := map[int]bool{}
	ins := []int{}
	for _, st := range steps {
		for _, v := range st.In {
			if v < 0 || v >= len(p.Types) || p.Fixed(v) != nil || known(p.Types[v]) && (made[v] || !p.ShapeOnly(v)) {
				continue
			}
			sym = true
			if !made[v] && !slices.Contains(ins, v) {
				ins = append(ins, v)
			}
		}
		for _, v := range st.Out {
			if v >= 0 && v < len(p.Types) {
				made[v] = true
				sym = sym || !known(p.Types[v])
			}
		}
	}
	if !sym {
		return nil
	}
	return ins
}

// classProgram is the program of a segment whose sizes the plan leaves
// symbolic (a class plan, see the planner's symbolic dimensions). At
// each Run it takes the sizes of the values entering the segment (the
// binding), lowers the segment for them into an ordinary program (the
// most recent maxBindings kept, so a binding seen again lowers nothing),
// and runs that program in one of its own execution contexts, whose
// buffers grow geometrically (see rebind) and whose command buffer is
// recorded again only when the context last ran another binding.
// Pipelines are the device's, shared with every program, and weights
// stay resident while the class program lives: a new binding records
// commands and creates no pipeline.
type classProgram struct {
	d     *Device
	p     *planner.Plan
	steps []planner.Step
	// queries are the steps' queries (planner.Plan.Query), the same for
	// every binding.
	queries []planner.Query
	// sym are the values entering the segment whose sizes make the
	// binding.
	sym []int
	// held are the weights the class program holds for its programs (see
	// holdWeights): of their weights, the plan's constants (constants),
	// which every binding binds. The device's mu guards it.
	held      map[weightKey]bool
	constants map[*graph.Tensor]bool

	contexts contextPool
	// largest are the types of sym at the sizes planner.Plan.DimMax gives
	// (nil where it does not give every one): the first Run lowers the
	// segment for them once, to size every context's buffers (reserve)
	// and the outputs it keeps on the device (reserveOut) for them.
	largest    map[int]*graph.Type
	sized      sync.Once
	reserve    [2]uint64
	reserveOut map[int]uint64
	// mu guards bound, using, lowered and recorded.
	mu sync.Mutex
	// bound holds a program per binding, the least recently used first.
	bound []binding
	// using counts the Runs of each program in flight: a program that
	// leaves bound is released once none uses it (its constants, such as
	// the values computed from its sizes, are its own).
	using map[*program]int
	// lowered and recorded count the bindings lowered and the contexts
	// rebound (command buffers recorded for another binding).
	lowered, recorded int
	// lowerings holds, by node, the latest launch lowered for each step
	// of the segment (see lowerStep); lowMu guards it.
	lowMu     sync.Mutex
	lowerings map[*graph.Node]*lowering
}

// lowering is a step's launch and the input types and constants it was
// lowered for.
type lowering struct {
	elems  []graph.DType
	shapes [][]int64
	consts []*graph.Tensor
	l      *launch
}

// lowerStep lowers the step of q, or returns the launch lowered for it
// before when its input types and constants are the same: lowering is a
// function of those (the node, its opset and the device being fixed),
// and compile copies a launch before it changes it, so a new binding
// lowers only the steps whose sizes or shape values it changes (for a
// decoder's decode step, the attention's; not the projections and
// normalizations of one token).
func (c *classProgram) lowerStep(q planner.Query, caps caps) (*launch, bool) {
	c.lowMu.Lock()
	if lw := c.lowerings[q.Node]; lw != nil && lw.matches(q) {
		c.lowMu.Unlock()
		return lw.l, true
	}
	c.lowMu.Unlock()
	l, ok := lower(q, caps)
	if !ok {
		return nil, false
	}
	lw := &lowering{elems: make([]graph.DType, len(q.Inputs)), shapes: make([][]int64, len(q.Inputs)), consts: slices.Clone(q.Consts), l: l}
	for k, t := range q.Inputs {
		if t != nil {
			// lower took only tensor types of known shapes.
			lw.elems[k], lw.shapes[k] = t.Elem, t.Shape.Ints()
		}
	}
	c.lowMu.Lock()
	if c.lowerings == nil {
		c.lowerings = make(map[*graph.Node]*lowering, len(c.steps))
	}
	c.lowerings[q.Node] = lw
	c.lowMu.Unlock()
	return l, true
}

// matches reports whether q has the input types and constants lw was
// lowered for.
func (lw *lowering) matches(q planner.Query) bool {
	if len(q.Inputs) != len(lw.shapes) || len(q.Consts) != len(lw.consts) {
		return false
	}
	for k, t := range q.Inputs {
		if q.Consts[k] != lw.consts[k] {
			return false
		}
		switch {
		case t == nil:
			if lw.shapes[k] != nil {
				return false
			}
		case t.Kind != graph.TensorKind || t.Elem != lw.elems[k] || len(t.Shape) != len(lw.shapes[k]) || lw.shapes[k] == nil:
			return false
		default:
			for i, d := range t.Shape {
				if !d.Known() || d.Value != lw.shapes[k][i] {
					return false
				}
			}
		}
	}
	return true
}

// binding is the program of a class program for one binding of its sizes.
type binding struct {
	key string
	pr  *program
}

func (d *Device) newClassProgram(p *planner.Plan, steps []planner.Step, sym []int) (*classProgram, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("vulkan: %s is closed", d.name)
	}
	queries := make([]planner.Query, len(steps))
	for i := range steps {
		queries[i] = p.Query(&steps[i])
		q, _ := trial(queries[i])
		if shapeOnly(q) {
			continue
		}
		if _, ok := lower(q, d.caps()); !ok {
			return nil, fmt.Errorf("vulkan: %s: no kernel for these input types", steps[i].Node)
		}
	}
	c := &classProgram{d: d, p: p, steps: steps, queries: queries, sym: sym, held: map[weightKey]bool{}, constants: map[*graph.Tensor]bool{}, using: map[*program]int{}}
	for _, t := range p.Constants {
		c.constants[t] = true
	}
	c.largest = largestTypes(p, sym)
	d.classes = append(d.classes, c)
	return c, nil
}

// Run runs the program of the Run's binding (see classProgram).
func (c *classProgram) Run(ctx context.Context, f *backend.Frame) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.d.fault(c.run(ctx, f))
}

func (c *classProgram) run(ctx context.Context, f *backend.Frame) error {
	if err := c.d.checkLost(); err != nil {
		return err
	}
	c.sized.Do(c.size)
	pr, err := c.program(f)
	if err != nil {
		return err
	}
	defer c.done(pr)
	ec, err := c.contexts.get(c.d.dev, c.newContext, c.released)
	if err != nil {
		return err
	}
	defer c.contexts.put(ec)
	if ec.owner != pr {
		if err := pr.rebind(ec); err != nil {
			return err
		}
		c.mu.Lock()
		c.recorded++
		c.mu.Unlock()
	}
	return pr.runIn(ctx, f, ec)
}

// largestTypes returns the types of the values sym of p with each unknown
// dimension at the size p.DimMax gives its name, nil unless it gives one
// for each and no value of sym is shape-only (a binding by value).
func largestTypes(p *planner.Plan, sym []int) map[int]*graph.Type {
	if len(p.DimMax) == 0 {
		return nil
	}
	types := map[int]*graph.Type{}
	for _, v := range sym {
		t := p.Types[v]
		if t == nil || t.Kind != graph.TensorKind || t.Shape == nil || p.ShapeOnly(v) {
			return nil
		}
		shape := slices.Clone(t.Shape)
		for i, d := range shape {
			if d.Known() {
				continue
			}
			n, ok := p.DimMax[d.Param]
			if d.Param == "" || !ok || n < 1 {
				return nil
			}
			shape[i] = graph.DimOf(n)
		}
		types[v] = graph.TensorType(t.Elem, shape)
	}
	return types
}

// size lowers the segment for the largest sizes (see largest), once, and
// keeps what its buffers and kept outputs need. Where that fails, the
// contexts grow as the Runs need.
func (c *classProgram) size() {
	if c.largest == nil {
		return
	}
	pr, err := c.lower(c.largest, nil)
	if err != nil {
		return
	}
	defer pr.Release()
	c.reserve = [2]uint64{pr.arenaSize, pr.ioSize}
	c.reserveOut = map[int]uint64{}
	for _, out := range pr.outs {
		c.reserveOut[out.v] = out.size
	}
}

// newContext is a new context with the buffers of the largest sizes, when
// known (see size).
func (c *classProgram) newContext() (*execContext, error) {
	ec, err := c.d.newExecContext()
	if err != nil || c.reserve == [2]uint64{} {
		return ec, err
	}
	ec.arena, err = c.d.newBuffer(c.reserve[0], false)
	if err == nil {
		ec.io, err = c.d.newBuffer(c.reserve[1], false)
	}
	if err == nil && !ec.io.hostReadable() {
		ec.stage, err = c.d.newBuffer(ec.io.size, true)
	}
	if err != nil {
		ec.destroy(c.d.dev)
		return nil, fmt.Errorf("vulkan: %s: allocating the buffers of %s for the largest sizes: %w", c.d.name, c.describe(), err)
	}
	return ec, nil
}

// done ends a Run's use of pr (see classProgram.program), releasing pr
// when it left bound meanwhile and no other Run uses it.
func (c *classProgram) done(pr *program) {
	c.mu.Lock()
	c.using[pr]--
	free := c.using[pr] == 0 && !slices.ContainsFunc(c.bound, func(b binding) bool { return b.pr == pr })
	if c.using[pr] == 0 {
		delete(c.using, pr)
	}
	c.mu.Unlock()
	if free {
		pr.Release()
	}
}

// program returns the program of f's binding, lowering it on first use,
// counted in use until done.
func (c *classProgram) program(f *backend.Frame) (*program, error) {
	vals := f.Values[c.d.name]
	types := make(map[int]*graph.Type, len(c.sym))
	values := map[int]*graph.Tensor{}
	var key strings.Builder
	for _, v := range c.sym {
		var t *graph.Type
		var h *graph.Tensor
		switch x := vals[v].(type) {
		case *Tensor:
			t, h = x.t.ValueType(), x.t
		case *graph.Tensor:
			t, h = x.ValueType(), x
		case *DeviceTensor:
			t = x.ValueType()
		default:
			return nil, fmt.Errorf("vulkan: input %q of %s is not a tensor", f.Plan.Values[v], c.describe())
		}
		types[v] = t
		fmt.Fprintf(&key, "%d%v;", v, t.Shape)
		if c.p.ShapeOnly(v) {
			if h == nil {
				var err error
				if h, err = vals[v].(*DeviceTensor).Read(); err != nil {
					return nil, err
				}
			}
			values[v] = h
			fmt.Fprintf(&key, "=%x;", h.Data)
		}
	}
	k := key.String()
	if c.contexts.isClosed() {
		return nil, c.released()
	}
	c.mu.Lock()
	if i := slices.IndexFunc(c.bound, func(b binding) bool { return b.key == k }); i >= 0 {
		b := c.bound[i]
		c.bound = append(slices.Delete(c.bound, i, i+1), b)
		c.using[b.pr]++
		c.mu.Unlock()
		return b.pr, nil
	}
	c.mu.Unlock()
	pr, err := c.lower(types, values)
	if err != nil {
		return nil, err
	}
	if c.contexts.isClosed() {
		pr.Release()
		return nil, c.released()
	}
	c.mu.Lock()
	if i := slices.IndexFunc(c.bound, func(b binding) bool { return b.key == k }); i >= 0 {
		// Another Run lowered the same binding meanwhile.
		b := c.bound[i]
		c.using[b.pr]++
		c.mu.Unlock()
		pr.Release()
		return b.pr, nil
	}
	c.lowered++
	c.bound = append(c.bound, binding{key: k, pr: pr})
	c.using[pr]++
	var evicted []*program
	for len(c.bound) > maxBindings {
		if e := c.bound[0].pr; c.using[e] == 0 {
			evicted = append(evicted, e)
		}
		c.bound = slices.Delete(c.bound, 0, 1)
	}
	c.mu.Unlock()
	// Releasing a program frees no context (its Runs use the class
	// program's) and none of the plan's weights (the class program holds
	// them); a program a Run still uses is released by done.
	for _, e := range evicted {
		e.Release()
	}
	return pr, nil
}

// lower compiles the segment for the sizes of types (those of c.sym)
// and the shape-only values entering it: it computes the shape values of
// those sizes (see evaluateShapes), gives every other value of the
// segment its size, from the lowering of the step that writes it, in a
// copy of the plan, and compiles the copy.
func (c *classProgram) lower(types map[int]*graph.Type, values map[int]*graph.Tensor) (*program, error) {
	bound := *c.p
	bound.Types = slices.Clone(c.p.Types)
	for v, t := range types {
		bound.Types[v] = t
	}
	caps := c.d.caps()
	lowered := make(map[*graph.Node]*launch, len(c.steps))
	e, err := evaluateShapes(&bound, c.steps, c.queries, values, func(cp *planner.Plan, st *planner.Step, q planner.Query) error {
		l, ok := c.lowerStep(q, caps)
		if !ok {
			return fmt.Errorf("vulkan: %s: no kernel for the input types of this Run (%s): %w", st.Node, describeTypes(q.Inputs), backend.ErrSizesRefused)
		}
		for k, o := range st.Out {
			if o >= 0 && k < len(l.outShapes) && !known(cp.Types[o]) {
				cp.Types[o] = graph.TensorType(l.outType(k), graph.ShapeOf(l.outShapes[k]...))
			}
		}
		lowered[st.Node] = l
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.lowered = lowered
	pr, err := c.d.compile(e)
	if err != nil {
		return nil, c.d.fault(err)
	}
	pr.reserveOut = c.reserveOut
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	for _, k := range pr.weights {
		// A chain's parameters are the program's own (made by each
		// compile, with the binding's sizes): they go with it.
		if !c.held[k] && c.constants[k.t] {
			c.held[k] = true
			c.d.users[k]++
		}
	}
	return pr, nil
}

// describeTypes lists types for an error.
func describeTypes(ts []*graph.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = fmt.Sprint(t)
	}
	return strings.Join(s, ", ")
}

// describe names the segment's nodes.
func (c *classProgram) describe() string {
	nodes := make([]*graph.Node, len(c.steps))
	for i, st := range c.steps {
		nodes[i] = st.Node
	}
	return describeNodes(nodes)
}

func (c *classProgram) released() error {
	return fmt.Errorf("vulkan: %s of %s is released (its plan was dropped or the device closed)", c.describe(), c.d.name)
}

// Bytes is the device memory of the class program's contexts now
// (backend.Sizer).
func (c *classProgram) Bytes() int64 { return c.contexts.bytes() }

// Release frees the class program's contexts and programs and the weights
// no other program binds, as program.Release does.
func (c *classProgram) Release() {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.Index(d.classes, c)
	if d.closed || i < 0 {
		return
	}
	d.classes = slices.Delete(d.classes, i, i+1)
	c.destroy()
	for _, b := range c.bound {
		b.pr.releaseLocked()
	}
	c.bound = nil
	d.releaseWeights(slices.Collect(maps.Keys(c.held)))
	c.held = nil
}

// destroy frees every context. The device's mu is held and the contexts
// are idle.
func (c *classProgram) destroy() { c.contexts.close(c.d.dev) }
