package vulkan

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// The limits and encoding of chain.comp's program (see its header).
const (
	maxChainOps    = 16
	maxChainInputs = 4
	chainHeader    = 2 + maxRank + maxChainInputs*maxRank
	chainBinary    = 64
	srcRunning     = 4
	srcImmediate   = 5
)

// chain is a run of consecutive elementwise steps of a segment that
// chain.comp computes in one dispatch: each step after the first reads the
// one before's output, which nothing else reads.
type chain struct {
	first, last int
	// step stands for the chain's last step in the segment: its node,
	// output and releases, with the chain's inputs.
	step planner.Step
	l    *launch
}

// findChains returns the chains of two or more steps among steps, lowered
// to launches: runs of unary.comp and binary.comp launches of one output
// shape and float type (float32, or float16 on their HALF variants, which
// chain.comp's HALF variant runs) in which every step after the first reads the output of the step
// before it, a value no other step reads and that does not leave the
// segment, with at most maxChainInputs distinct inputs that are not
// scalar constants (those become immediates) and maxChainOps steps, and
// whose output does not share memory with a broadcast input.
func findChains(p *planner.Plan, steps []planner.Step, launches []*launch, escapes map[int]bool, reads map[int]int) []chain {
	var out []chain
	for i := 0; i < len(steps); {
		c, ok := newChain(p, steps, launches, i)
		if !ok {
			i++
			continue
		}
		for j := i + 1; j < len(steps) && j-i < maxChainOps; j++ {
			prev := steps[j-1].Out[0]
			if escapes[prev] || reads[prev] != 1 || !slices.Contains(steps[j].In, prev) || !c.add(p, steps, launches, j) {
				break
			}
		}
		if c.last > c.first {
			c.finish(p, steps)
			out = append(out, c.chain)
		}
		i = c.last + 1
	}
	return out
}

// chainBuilder collects a chain's inputs and program.
type chainBuilder struct {
	chain
	shape []int64
	// float is the element type of the chain's tensors, float32 or
	// float16 (see launch.floatType).
	float  graph.DType
	inputs []int
	prog   []uint32
}

// elementwise tells the launches chain.comp can run: one dispatch of
// unary.comp or binary.comp, or of their HALF variants.
func elementwise(l *launch) bool {
	return l != nil && len(l.then) == 0 && (l.runs("unary") || l.runs("binary"))
}

// newChain starts a chain at step i.
func newChain(p *planner.Plan, steps []planner.Step, launches []*launch, i int) (*chainBuilder, bool) {
	l := launches[i]
	if !elementwise(l) || len(l.outShapes[0]) > maxRank || len(steps[i].Out) != 1 {
		return nil, false
	}
	c := &chainBuilder{chain: chain{first: i, last: i - 1}, shape: l.outShapes[0], float: l.floatType()}
	return c, c.add(p, steps, launches, i)
}

// add appends step j to the chain; it reports false, leaving the chain as
// it was, when the step does not fit.
func (c *chainBuilder) add(p *planner.Plan, steps []planner.Step, launches []*launch, j int) bool {
	l, st := launches[j], &steps[j]
	if !elementwise(l) || !slices.Equal(l.outShapes[0], c.shape) || l.floatType() != c.float || len(st.Out) != 1 {
		return false
	}
	inputs := slices.Clone(c.inputs)
	var imm float32
	source := func(k int) (uint32, bool) {
		v := st.In[k]
		if j > c.first && v == steps[j-1].Out[0] {
			return srcRunning, true
		}
		if f, ok := floatScalar(p.Fixed(v), c.float); ok {
			imm = f
			return srcImmediate, true
		}
		if at := slices.Index(inputs, v); at >= 0 {
			return uint32(at), true
		}
		if len(inputs) == maxChainInputs {
			return 0, false
		}
		inputs = append(inputs, v)
		return uint32(len(inputs) - 1), true
	}
	op := []uint32{uint32(l.op), 0, 0, 0}
	a, ok := source(0)
	if !ok {
		return false
	}
	if l.runs("unary") {
		if a == srcImmediate {
			return false
		}
		op[1] = a
		op[2] = binary.LittleEndian.Uint32(l.push[4:])
		op[3] = binary.LittleEndian.Uint32(l.push[8:])
	} else {
		b, ok := source(1)
		if !ok || a == srcImmediate && b == srcImmediate {
			return false
		}
		op[0] += chainBinary
		op[1] = a | b<<8
		op[2] = math.Float32bits(imm)
	}
	for _, v := range inputs {
		if sharesArena(p, v, st.Out[0]) && !inPlace(p, v, st.Out[0], c.shape) {
			// Invocations would overwrite elements of the input that
			// others still read: the planner gave the output memory of a
			// value that, unfused, was dead before it was written (a
			// broadcast input, or one placed at another offset).
			return false
		}
	}
	c.inputs = inputs
	c.prog = append(c.prog, op...)
	c.last = j
	return true
}

// sharesArena reports whether values a and b have overlapping arena
// slots.
func sharesArena(p *planner.Plan, a, b int) bool {
	x, y := p.Buffers[a], p.Buffers[b]
	return x != nil && y != nil && x.Device == y.Device && x.Offset < y.Offset+y.Size && y.Offset < x.Offset+x.Size
}

// inPlace reports whether chain.comp may write its output of shape
// shape over input v: each invocation reads v's element i and then writes
// the output's element i, so v must have the output's shape and start at
// the output's offset.
func inPlace(p *planner.Plan, v, out int, shape []int64) bool {
	return slices.Equal(p.Types[v].Shape.Ints(), shape) && p.Buffers[v].Offset == p.Buffers[out].Offset
}

// finish builds the chain's launch and the step that stands for it.
func (c *chainBuilder) finish(p *planner.Plan, steps []planner.Step) {
	last := steps[c.last]
	c.step = planner.Step{Kind: planner.Compute, Node: last.Node, Opset: last.Opset, Device: last.Device, Logical: last.Logical,
		In: c.inputs, Out: last.Out, Release: last.Release}
	n := graph.NumElements(c.shape)
	params := make([]uint32, chainHeader, chainHeader+len(c.prog))
	params[0], params[1] = uint32(c.last-c.first+1), uint32(len(c.shape))
	bindings := make([]slot, 0, maxChainInputs+2)
	for k := range maxChainInputs {
		s := slot{k: 0}
		if k < len(c.inputs) {
			s.k = k
		}
		bindings = append(bindings, s)
	}
	bindings = append(bindings, slot{out: true}, slot{k: paramsSlot})
	for d, size := range c.shape {
		params[2+d] = uint32(size)
	}
	for k, v := range c.inputs {
		for d, st := range strides(p.Types[v].Shape.Ints(), c.shape) {
			params[2+maxRank+maxRank*k+d] = uint32(st)
		}
	}
	words32 := append(params, c.prog...)
	t := graph.NewTensor(graph.Uint32, []int64{int64(len(words32))})
	copy(graph.View[uint32](t), words32)
	shader := "chain"
	if c.float == graph.Float16 {
		shader += halfSuffix
	}
	c.l = &launch{shader: shader, bindings: bindings, push: words(uint32(n), uint32(len(c.inputs))), elems: n,
		outShapes: [][]int64{c.shape}, outTypes: []graph.DType{c.float}, params: t}
}
