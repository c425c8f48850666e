package hostfallback

import (
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// parallelGrain is roughly how many elements of elementwise work make a
// chunk worth a goroutine.
const parallelGrain = 1 << 14

// maxBroadcastInputs is the most inputs a broadcastPlan maps (Where has 3).
const maxBroadcastInputs = 3

// Element type constraints of the elementwise kernels.
type (
	signedInt interface {
		~int8 | ~int16 | ~int32 | ~int64
	}
	unsignedInt interface {
		~uint8 | ~uint16 | ~uint32 | ~uint64
	}
	integer    interface{ signedInt | unsignedInt }
	floating   interface{ ~float32 | ~float64 }
	realNumber interface{ integer | floating }
)

// broadcastShapes returns the shape that ONNX (numpy) multidirectional
// broadcasting gives the shapes: they are aligned at their last dimension
// and each dimension must be 1 or equal to the others' dimension there.
func broadcastShapes(shapes ...[]int64) ([]int64, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int64, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == *o || d == 1:
			case *o == 1:
				*o = d
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast: dimension %d is both %d and %d", shapes, off+i-rank, *o, d)
			}
		}
	}
	return out, nil
}

// broadcastPlan maps up to maxBroadcastInputs input tensors onto an output
// they broadcast to. Output dimensions of size 1 are dropped and adjacent
// dimensions along which every input moves alike are merged, so that
// [N,C,H,W]+[C,1,1] becomes [N,C,H*W] with the second input fixed along the
// innermost dimension. Each input either advances with the innermost
// dimension (unit) or stays on one element along it.
type broadcastPlan struct {
	n       int   // output elements
	inputs  int   // number of inputs
	dims    []int // merged output dimensions, outermost first; never empty
	strides [maxBroadcastInputs][]int
	unit    [maxBroadcastInputs]bool
}

// newBroadcastPlan plans the broadcast of the inputs' shapes to out. Every
// input must broadcast to out (each of its dimensions 1 or equal to out's,
// its rank at most out's).
func newBroadcastPlan(out []int64, ins ...[]int64) (*broadcastPlan, error) {
	if len(ins) > maxBroadcastInputs {
		return nil, fmt.Errorf("broadcast of %d inputs (at most %d)", len(ins), maxBroadcastInputs)
	}
	p := &broadcastPlan{n: int(graph.NumElements(out)), inputs: len(ins)}
	var full [maxBroadcastInputs][]int
	for k, s := range ins {
		if len(s) > len(out) {
			return nil, fmt.Errorf("shape %v does not broadcast to %v", s, out)
		}
		full[k] = make([]int, len(out))
		step := 1
		for i := len(out) - 1; i >= 0; i-- {
			j := i - (len(out) - len(s))
			if j < 0 || s[j] == 1 {
				continue
			}
			if s[j] != out[i] {
				return nil, fmt.Errorf("shape %v does not broadcast to %v", s, out)
			}
			full[k][i] = step
			step *= int(s[j])
		}
	}
	for i, d := range out {
		if d == 1 {
			continue
		}
		last := len(p.dims) - 1
		if last >= 0 && p.mergeable(full, i, int(d)) {
			p.dims[last] *= int(d)
			for k := range ins {
				p.strides[k][last] = full[k][i]
			}
			continue
		}
		p.dims = append(p.dims, int(d))
		for k := range ins {
			p.strides[k] = append(p.strides[k], full[k][i])
		}
	}
	if len(p.dims) == 0 {
		p.dims = []int{1}
		for k := range ins {
			p.strides[k] = []int{1}
		}
	}
	for k := range ins {
		p.unit[k] = p.strides[k][len(p.dims)-1] != 0
	}
	return p, nil
}

// mergeable reports whether output dimension i (of size d, with full input
// strides) can be folded into the plan's current innermost dimension.
func (p *broadcastPlan) mergeable(full [maxBroadcastInputs][]int, i, d int) bool {
	last := len(p.dims) - 1
	for k := range p.inputs {
		outer, inner := p.strides[k][last], full[k][i]
		if outer != inner*d {
			return false
		}
	}
	return true
}

// runs calls f for each run of consecutive output elements in [lo, hi)
// along the innermost dimension: o is the run's output offset, in the
// offsets of the inputs' elements at its start, and n its length. Along a
// run, input k advances with the output when p.unit[k], else stays.
func (p *broadcastPlan) runs(lo, hi int, f func(o int, in *[maxBroadcastInputs]int, n int)) {
	r := len(p.dims)
	inner := p.dims[r-1]
	var small [8]int
	idx := small[:0]
	if r > len(small) {
		idx = make([]int, r)
	}
	idx = idx[:r]
	rem := lo
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % p.dims[d]
		rem /= p.dims[d]
	}
	var off [maxBroadcastInputs]int
	for k := range p.inputs {
		for d := range r {
			off[k] += idx[d] * p.strides[k][d]
		}
	}
	for o := lo; o < hi; {
		n := min(inner-idx[r-1], hi-o)
		f(o, &off, n)
		o += n
		idx[r-1] += n
		for k := range p.inputs {
			off[k] += n * p.strides[k][r-1]
		}
		if idx[r-1] < inner || o >= hi {
			continue
		}
		idx[r-1] = 0
		for k := range p.inputs {
			off[k] -= inner * p.strides[k][r-1]
		}
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			for k := range p.inputs {
				off[k] += p.strides[k][d]
			}
			if idx[d] < p.dims[d] {
				break
			}
			idx[d] = 0
			for k := range p.inputs {
				off[k] -= p.dims[d] * p.strides[k][d]
			}
		}
	}
}

// forEach is runs over the whole output, split across goroutines.
func (p *broadcastPlan) forEach(threads *Threads, f func(o int, in *[maxBroadcastInputs]int, n int)) {
	threads.For(p.n, parallelGrain, func(lo, hi int) { p.runs(lo, hi, f) })
}

// runMode says how the two inputs of a binary inner loop move along a run.
type runMode uint8

const (
	runVV runMode = iota // both advance
	runVS                // the first advances, the second stays
	runSV                // the first stays, the second advances
)

// mode2 is the runMode of a two-input plan.
func (p *broadcastPlan) mode2() runMode {
	switch {
	case p.unit[0] && !p.unit[1]:
		return runVS
	case !p.unit[0] && p.unit[1]:
		return runSV
	}
	return runVV
}

// rowScalar reports whether a two-input plan is a tensor with one value
// of the other input a row: dims [rows, n], input v advancing along both
// (strides n, 1), the other by one a row and staying along it (1, 0), as
// [N,C,H,W] times [N,C,1,1] (a squeeze-and-excitation scale) plans.
func (p *broadcastPlan) rowScalar() (v int, ok bool) {
	if p.inputs != 2 || len(p.dims) != 2 || p.n == 0 {
		return 0, false
	}
	n := p.dims[1]
	for v := range 2 {
		if slices.Equal(p.strides[v], []int{n, 1}) && slices.Equal(p.strides[1-v], []int{1, 0}) {
			return v, true
		}
	}
	return 0, false
}

// binaryLoop runs the inner loop k over every run of a two-input plan, in
// parallel. k gets the run's output slice and the inputs from the run's
// start: an input that stays is read at index 0 only.
func binaryLoop[A, B, D any](threads *Threads, p *broadcastPlan, d []D, a []A, b []B, k func(d []D, a []A, b []B, m runMode)) {
	m := p.mode2()
	p.forEach(threads, func(o int, in *[maxBroadcastInputs]int, n int) {
		k(d[o:o+n], a[in[0]:], b[in[1]:], m)
	})
}

// legacyBroadcastShape returns the shape B takes for the opset 1-6 form of
// the binary ops (the broadcast and axis attributes): without broadcast, B
// must have A's shape; with it, B's dimensions line up with A's starting at
// axis (by default B's last dimension with A's last).
func legacyBroadcastShape(c *Call, a, b []int64) ([]int64, error) {
	p := ops.LegacyBroadcastOf(c.Node, c.Opset)
	if p.Broadcast == 0 {
		if !slices.Equal(a, b) {
			return nil, c.Errorf("shapes %v and %v differ and broadcast is not set", a, b)
		}
		return b, nil
	}
	if len(b) > len(a) {
		return nil, c.Errorf("cannot broadcast %v to %v", b, a)
	}
	if graph.NumElements(b) == 1 {
		return nil, nil
	}
	axis := int64(len(a) - len(b))
	if p.Axis != nil {
		axis = *p.Axis
	}
	if axis < 0 {
		axis += int64(len(a))
	}
	if axis < 0 || axis+int64(len(b)) > int64(len(a)) {
		return nil, c.Errorf("broadcast axis %d out of range for shapes %v and %v", axis, a, b)
	}
	shape := make([]int64, len(a))
	for i := range shape {
		shape[i] = 1
	}
	copy(shape[axis:], b)
	return shape, nil
}

// binaryShapes returns the output shape of a two-input elementwise node and
// B's shape as the broadcast sees it (B's own, or realigned for the legacy
// broadcast of opsets before 7).
func binaryShapes(c *Call, a, b []int64) (out, bShape []int64, err error) {
	bShape = b
	if c.Opset < 7 {
		if bShape, err = legacyBroadcastShape(c, a, b); err != nil {
			return nil, nil, err
		}
	}
	out, err = broadcastShapes(a, bShape)
	if err != nil {
		return nil, nil, c.Errorf("%w", err)
	}
	return out, bShape, nil
}
