package hostfallback

import (
	"math"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("RNN", rnnKernel)
	Register("GRU", gruKernel)
	Register("LSTM", lstmKernel)
}

// rnnAct is one activation function of a recurrent op with its alpha and
// beta.
type rnnAct struct {
	name        string
	alpha, beta float32
}

// rnnActDefaults are the activations the recurrent ops accept, with their
// default alpha and beta (those of the ONNX ops of the same name); the
// flags say which parameters a function consumes from activation_alpha
// and activation_beta.
var rnnActDefaults = map[string]struct {
	alpha, beta       float32
	useAlpha, useBeta bool
}{
	"relu":            {},
	"tanh":            {},
	"sigmoid":         {},
	"softsign":        {},
	"softplus":        {},
	"affine":          {1, 0, true, true},
	"leakyrelu":       {0.01, 0, true, false},
	"thresholdedrelu": {1, 0, true, false},
	"scaledtanh":      {1, 1, true, true},
	"hardsigmoid":     {0.2, 0.5, true, true},
	"elu":             {1, 0, true, false},
}

// apply replaces each v by act(v), after clipping v to [−clip, clip] when
// clip > 0.
func (a rnnAct) apply(v []float32, clip float32) {
	if clip > 0 {
		for i, x := range v {
			v[i] = min(max(x, -clip), clip)
		}
	}
	switch a.name {
	case "sigmoid":
		sigmoidF32(v, false)
	case "tanh":
		tanhSlice(v)
	case "relu":
		for i, x := range v {
			v[i] = max(x, 0)
		}
	case "affine":
		for i, x := range v {
			v[i] = a.alpha*x + a.beta
		}
	case "leakyrelu":
		for i, x := range v {
			if x < 0 {
				v[i] = a.alpha * x
			}
		}
	case "thresholdedrelu":
		for i, x := range v {
			if x < a.alpha {
				v[i] = 0
			}
		}
	case "scaledtanh":
		for i, x := range v {
			v[i] = a.alpha * float32(math.Tanh(float64(a.beta*x)))
		}
	case "hardsigmoid":
		for i, x := range v {
			v[i] = min(max(a.alpha*x+a.beta, 0), 1)
		}
	case "elu":
		for i, x := range v {
			if x < 0 {
				v[i] = a.alpha * float32(math.Expm1(float64(x)))
			}
		}
	case "softsign":
		for i, x := range v {
			v[i] = x / (1 + float32(math.Abs(float64(x))))
		}
	case "softplus":
		for i, x := range v {
			v[i] = float32(math.Log1p(math.Exp(float64(x))))
		}
	}
}

// rnnLayer is a checked recurrent node with its inputs in layout 0 and
// float32: X [seq, batch, input], W [dirs, gates·hidden, input], R [dirs,
// gates·hidden, hidden], B [dirs, 2·gates·hidden], initial states [dirs,
// batch, hidden].
type rnnLayer struct {
	seq, batch, input, hidden, dirs, gates int
	layout                                 int
	reverse                                bool
	x, w, r, b, h0, c0, p                  []float32
	lens                                   []int
	acts                                   [][]rnnAct
	clip                                   float32
	dtype                                  graph.DType
	// splits are the gate boundaries of the recurrence's products (GRU
	// multiplies by the z and r gates' R apart from the h gate's).
	splits []int
	// weights holds the transposed weights the products multiply by.
	weights *rnnWeights
	// y, yh and yc receive the outputs in layout 0: Y [seq, dirs, batch,
	// hidden] (nil when not asked for) and the final states [dirs, batch,
	// hidden].
	y, yh, yc []float32
}

// rnnSetup checks the inputs and attributes common to RNN, GRU and LSTM
// (gates gates per direction, defaults the default activations of one
// direction, splits the gate boundaries of the recurrent products).
func rnnSetup(c *Call, gates int, defaults []string, splits ...int) (*rnnLayer, error) {
	x, w, r := c.Tensor(0), c.Tensor(1), c.Tensor(2)
	if x == nil || w == nil || r == nil {
		return nil, c.Errorf("inputs X, W and R are required")
	}
	if !f32Family(x.DType) {
		return nil, c.Unsupported("%s of %s", c.Node.OpType, x.DType)
	}
	for _, in := range []struct {
		name string
		t    *graph.Tensor
	}{{"W", w}, {"R", r}, {"B", c.Tensor(3)}} {
		if in.t != nil && in.t.DType != x.DType {
			return nil, c.Errorf("%s of %s is not of X's type %s", in.name, in.t.DType, x.DType)
		}
	}
	if x.Rank() != 3 || w.Rank() != 3 || r.Rank() != 3 {
		return nil, c.Errorf("X%v, W%v and R%v must be 3-D", x.Shape, w.Shape, r.Shape)
	}
	l := &rnnLayer{gates: gates, splits: splits, dtype: x.DType, layout: int(ops.RecurrentOf(c.Node, c.Opset).Layout)}
	switch l.layout {
	case 0:
		l.seq, l.batch = int(x.Shape[0]), int(x.Shape[1])
	case 1:
		l.seq, l.batch = int(x.Shape[1]), int(x.Shape[0])
	default:
		return nil, c.Errorf("layout %d must be 0 or 1", l.layout)
	}
	l.input = int(x.Shape[2])
	p := ops.RecurrentOf(c.Node, c.Opset)
	l.hidden = int(r.Shape[2])
	if p.HiddenSize != nil {
		l.hidden = int(*p.HiddenSize)
	}
	switch dir := p.Direction; dir {
	case "forward":
		l.dirs = 1
	case "reverse":
		l.dirs, l.reverse = 1, true
	case "bidirectional":
		l.dirs = 2
	default:
		return nil, c.Errorf("direction %q", dir)
	}
	gh := int64(gates * l.hidden)
	if !slicesEqual(w.Shape, []int64{int64(l.dirs), gh, int64(l.input)}) || !slicesEqual(r.Shape, []int64{int64(l.dirs), gh, int64(l.hidden)}) {
		return nil, c.Errorf("W%v and R%v do not fit %d direction(s), hidden size %d and input size %d", w.Shape, r.Shape, l.dirs, l.hidden, l.input)
	}
	l.x, l.w, l.r = rnnLayout0(f32Data(x), l.layout, l.batch, l.seq, l.input), f32Data(w), f32Data(r)
	prepare := func() (*rnnWeights, error) { return l.prepareWeights(), nil }
	if c.Const(1) && c.Const(2) {
		l.weights, _ = Memo(c, c.ShapeKey(), prepare)
	} else {
		l.weights, _ = prepare()
	}
	if b := c.Tensor(3); b != nil {
		if !slicesEqual(b.Shape, []int64{int64(l.dirs), 2 * gh}) {
			return nil, c.Errorf("B%v must be [%d %d]", b.Shape, l.dirs, 2*gh)
		}
		l.b = f32Data(b)
	} else {
		l.b = make([]float32, l.dirs*2*int(gh))
	}
	l.lens = make([]int, l.batch)
	for i := range l.lens {
		l.lens[i] = l.seq
	}
	if sl := c.Tensor(4); sl != nil {
		v, err := sl.Int64s()
		if err != nil || len(v) != l.batch {
			return nil, c.Errorf("sequence_lens %s%v must hold %d integers", sl.DType, sl.Shape, l.batch)
		}
		for i, n := range v {
			if n < 0 || n > int64(l.seq) {
				return nil, c.Errorf("sequence_lens %v outside [0, %d]", v, l.seq)
			}
			l.lens[i] = int(n)
		}
	}
	var err error
	if l.h0, err = l.state(c, 5, "initial_h"); err != nil {
		return nil, err
	}
	if a := c.Node.Attr("clip"); a != nil {
		l.clip = a.F
		if l.clip <= 0 {
			return nil, c.Errorf("clip %v must be positive", l.clip)
		}
	}
	return l, l.activations(c, defaults)
}

// rnnWeight is the transpose of some rows of W or R, a k×n matrix: packed
// whole for the GEMM's kernels where they can read it so (see
// matmulPrepacks), else row-major. Transposed, the recurrence reads R's
// rows contiguously (a dot product per gate unit would reduce each one
// across a vector), and packed once, the products do not pack it per run
// or, in the GEMV, read it down the columns of a wide row.
type rnnWeight struct {
	k, n   int
	packed bool
	data   []float32
}

// rnnWeights are a layer's weights as its products read them: w[d] is
// direction d's Wᵀ, rec[d][i] its Rᵀ for the gates from splits[i] to
// splits[i+1].
type rnnWeights struct {
	w   []rnnWeight
	rec [][]rnnWeight
}

// newRNNWeight prepares the transpose of rows [g0, g1) of r (k values a
// row) for products of m rows by it.
func newRNNWeight(r []float32, g0, g1, k, m int) rnnWeight {
	n := g1 - g0
	t := make([]float32, k*n)
	for q := range n {
		for p, v := range r[(g0+q)*k : (g0+q+1)*k] {
			t[p*n+q] = v
		}
	}
	w := rnnWeight{k: k, n: n, data: t}
	if matmulPrepacks(m, n, k) {
		w.packed, w.data = true, gemmPackWhole(false, t, k, n, gemmBest.nr)
	}
	return w
}

// prepareWeights makes the layer's rnnWeights from W and R.
func (l *rnnLayer) prepareWeights() *rnnWeights {
	H, gh := l.hidden, l.gates*l.hidden
	ws := &rnnWeights{rec: make([][]rnnWeight, l.dirs)}
	for d := range l.dirs {
		ws.w = append(ws.w, newRNNWeight(l.w[d*gh*l.input:(d+1)*gh*l.input], 0, gh, l.input, l.seq*l.batch))
		r := l.r[d*gh*H : (d+1)*gh*H]
		for i := range len(l.splits) - 1 {
			ws.rec[d] = append(ws.rec[d], newRNNWeight(r, l.splits[i]*H, l.splits[i+1]*H, H, l.batch))
		}
	}
	return ws
}

// mul sets out (m×n) to a·w for a row-major a (m×k) or, with add, adds
// a·w to it; serial keeps it on the calling goroutine.
func (w *rnnWeight) mul(threads *Threads, m int, a, out []float32, add, serial bool) {
	workers := threads.Workers()
	if serial {
		threads, workers = nil, 1
	}
	if m*w.n*w.k < gemmParallelWork {
		workers = 1
	}
	var beta float32
	if add {
		beta = 1
	}
	switch {
	case w.packed && m <= gemvMaxRows:
		gemvPacked(threads, m, w.n, w.k, a, w.k, w.data, gemmBest.nr, add, out, w.n)
	case w.packed:
		gemmPacked(threads, gemmBest, false, false, m, w.n, w.k, 1, a, w.k, nil, w.n, w.data, beta, nil, out, w.n, workers)
	default:
		gemmRun(threads, gemmBest, false, false, m, w.n, w.k, 1, a, w.k, w.data, w.n, beta, nil, out, w.n, workers)
	}
}

// state returns the optional initial state input i in layout 0, zeros
// when it is absent.
func (l *rnnLayer) state(c *Call, i int, name string) ([]float32, error) {
	t := c.Tensor(i)
	if t == nil {
		return make([]float32, l.dirs*l.batch*l.hidden), nil
	}
	want := []int64{int64(l.dirs), int64(l.batch), int64(l.hidden)}
	if l.layout == 1 {
		want[0], want[1] = want[1], want[0]
	}
	if !f32Family(t.DType) || !slicesEqual(t.Shape, want) {
		return nil, c.Errorf("%s %s%v must be %v", name, t.DType, t.Shape, want)
	}
	return rnnLayout0(f32Data(t), l.layout, l.batch, l.dirs, l.hidden), nil
}

// rnnLayout0 returns v, a [b, a, n] tensor when layout is 1, as [a, b, n];
// layout 0 data is returned as it is.
func rnnLayout0(v []float32, layout, b, a, n int) []float32 {
	if layout == 0 {
		return v
	}
	out := make([]float32, len(v))
	for i := range b {
		for j := range a {
			copy(out[(j*b+i)*n:(j*b+i+1)*n], v[(i*a+j)*n:(i*a+j+1)*n])
		}
	}
	return out
}

// activations reads activations, activation_alpha and activation_beta:
// one list per direction (a single direction's list serves both of a
// bidirectional node), alpha and beta consumed in order by the functions
// that take them.
func (l *rnnLayer) activations(c *Call, defaults []string) error {
	p := ops.RecurrentOf(c.Node, c.Opset)
	names := p.Activations
	if c.Node.Attr("activations") == nil {
		names = nil // the catalog's default lists the forward ones of one op; defaults has each op's
	}
	per := len(defaults)
	switch {
	case names == nil:
		for range l.dirs {
			names = append(names, defaults...)
		}
	case len(names) == per && l.dirs == 2:
		names = append(names, names...)
	case len(names) != per*l.dirs:
		return c.Errorf("activations %v: want %d per direction", names, per)
	}
	alphas, betas := p.ActivationAlpha, p.ActivationBeta
	l.acts = make([][]rnnAct, l.dirs)
	for i, name := range names {
		key := strings.ToLower(name)
		def, ok := rnnActDefaults[key]
		if !ok {
			return c.Unsupported("activation %q", name)
		}
		a := rnnAct{name: key, alpha: def.alpha, beta: def.beta}
		if def.useAlpha && len(alphas) > 0 {
			a.alpha, alphas = alphas[0], alphas[1:]
		}
		if def.useBeta && len(betas) > 0 {
			a.beta, betas = betas[0], betas[1:]
		}
		l.acts[i/per] = append(l.acts[i/per], a)
	}
	return nil
}

// wantsY allocates the layout-0 Y buffer when output 0 is asked for.
func (l *rnnLayer) wantsY(c *Call) {
	if outputWanted(c, 0) {
		l.y = make([]float32, l.seq*l.dirs*l.batch*l.hidden)
	}
	l.yh = make([]float32, l.dirs*l.batch*l.hidden)
}

// outputs stores Y, Y_h and (for LSTM, when yc is set) Y_c in the node's
// layout.
func (l *rnnLayer) outputs(c *Call) {
	H := int64(l.hidden)
	if l.y != nil {
		shape := []int64{int64(l.seq), int64(l.dirs), int64(l.batch), H}
		v := l.y
		if l.layout == 1 {
			shape = []int64{int64(l.batch), int64(l.seq), int64(l.dirs), H}
			v = make([]float32, len(l.y))
			for t := range l.seq {
				for d := range l.dirs {
					for b := range l.batch {
						copy(v[((b*l.seq+t)*l.dirs+d)*l.hidden:][:l.hidden], l.y[((t*l.dirs+d)*l.batch+b)*l.hidden:][:l.hidden])
					}
				}
			}
		}
		y := c.Output(0, l.dtype, shape)
		l.store(y, v)
	}
	for k, v := range [][]float32{l.yh, l.yc} {
		if v == nil || !outputWanted(c, k+1) {
			continue
		}
		shape := []int64{int64(l.dirs), int64(l.batch), H}
		if l.layout == 1 {
			shape = []int64{int64(l.batch), int64(l.dirs), H}
			v = rnnLayout0(v, 1, l.dirs, l.batch, l.hidden)
		}
		l.store(c.Output(k+1, l.dtype, shape), v)
	}
}

// store copies v into the output tensor t.
func (l *rnnLayer) store(t *graph.Tensor, v []float32) {
	out := f32Target(t)
	copy(out, v)
	f32Commit(t, out)
}

// inputProjection returns X·Wᵀ + bias for direction d over the whole
// sequence, [seq·batch, gates·hidden], in a buffer of gemmBufs that the
// caller puts back: the bias of gate k is Wb + Rb when both(k), else Wb
// alone.
func (l *rnnLayer) inputProjection(threads *Threads, d int, serial bool, both func(gate int) bool) *[]float32 {
	gh := l.gates * l.hidden
	rows := l.seq * l.batch
	buf := gemmBuf(rows * gh)
	out := *buf
	l.weights.w[d].mul(threads, rows, l.x, out, false, serial)
	biasBuf := gemmBuf(gh)
	defer gemmBufs.Put(biasBuf)
	bias := *biasBuf
	wb, rb := l.b[d*2*gh:d*2*gh+gh], l.b[d*2*gh+gh:(d+1)*2*gh]
	for j := range bias {
		bias[j] = wb[j]
		if both(j / l.hidden) {
			bias[j] += rb[j]
		}
	}
	for i := range rows {
		row := out[i*gh : (i+1)*gh]
		for j, v := range bias {
			row[j] += v
		}
	}
	return buf
}

// run runs direction d's recurrence: step(t, rows) is called for each
// time step in processing order with the batch rows still inside their
// sequence, after which their states are stored in Y.
func (l *rnnLayer) run(d int, h []float32, step func(t int, active []int)) {
	reverse := l.reverse || d == 1
	active := make([]int, 0, l.batch)
	for s := range l.seq {
		t := s
		if reverse {
			t = l.seq - 1 - s
		}
		active = active[:0]
		for b, n := range l.lens {
			if t < n {
				active = append(active, b)
			}
		}
		if len(active) == 0 {
			continue
		}
		step(t, active)
		if l.y != nil {
			for _, b := range active {
				copy(l.y[((t*l.dirs+d)*l.batch+b)*l.hidden:][:l.hidden], h[b*l.hidden:(b+1)*l.hidden])
			}
		}
	}
}

// directions runs f for each direction, in parallel (with serial products)
// when there are two.
func (l *rnnLayer) directions(threads *Threads, f func(d int, serial bool)) {
	if l.dirs == 1 {
		f(0, false)
		return
	}
	threads.For(l.dirs, 1, func(lo, hi int) {
		for d := lo; d < hi; d++ {
			f(d, true)
		}
	})
}

// recurrence adds h·Rᵀ for the rows of direction d's R from gate
// l.splits[i] to the next split into out ([batch, rows]).
func (l *rnnLayer) recurrence(threads *Threads, d, i int, h, out []float32, serial bool) {
	l.weights.rec[d][i].mul(threads, l.batch, h, out, true, serial)
}

// rnnKernel is ONNX RNN: Hₜ = f(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb).
func rnnKernel(c *Call) error {
	l, err := rnnSetup(c, 1, []string{"Tanh"}, 0, 1)
	if err != nil {
		return err
	}
	l.wantsY(c)
	H := l.hidden
	l.directions(c.Threads, func(d int, serial bool) {
		xwBuf := l.inputProjection(c.Threads, d, serial, func(int) bool { return true })
		defer gemmBufs.Put(xwBuf)
		xw := *xwBuf
		h := append([]float32{}, l.h0[d*l.batch*H:(d+1)*l.batch*H]...)
		g := make([]float32, l.batch*H)
		l.run(d, h, func(t int, active []int) {
			copy(g, xw[t*l.batch*H:(t+1)*l.batch*H])
			l.recurrence(c.Threads, d, 0, h, g, serial)
			for _, b := range active {
				row := g[b*H : (b+1)*H]
				l.acts[d][0].apply(row, l.clip)
				copy(h[b*H:(b+1)*H], row)
			}
		})
		copy(l.yh[d*l.batch*H:], h)
	})
	l.outputs(c)
	return nil
}

// gruKernel is ONNX GRU (gates z, r, h):
//
//	zₜ = f(Xₜ·Wzᵀ + Hₜ₋₁·Rzᵀ + Wbz + Rbz), rₜ likewise,
//	hₜ = g(Xₜ·Whᵀ + (rₜ⊙Hₜ₋₁)·Rhᵀ + Rbh + Wbh), or with
//	linear_before_reset g(Xₜ·Whᵀ + rₜ⊙(Hₜ₋₁·Rhᵀ + Rbh) + Wbh),
//	Hₜ = (1 − zₜ)⊙hₜ + zₜ⊙Hₜ₋₁.
func gruKernel(c *Call) error {
	l, err := rnnSetup(c, 3, []string{"Sigmoid", "Tanh"}, 0, 2, 3)
	if err != nil {
		return err
	}
	lbr := ops.Params[ops.GRUParams](c.Node, c.Opset).LinearBeforeReset != 0
	l.wantsY(c)
	H := l.hidden
	l.directions(c.Threads, func(d int, serial bool) {
		xwBuf := l.inputProjection(c.Threads, d, serial, func(gate int) bool { return gate < 2 || !lbr })
		defer gemmBufs.Put(xwBuf)
		xw := *xwBuf
		rbh := l.b[d*6*H+5*H : (d+1)*6*H]
		h := append([]float32{}, l.h0[d*l.batch*H:(d+1)*l.batch*H]...)
		zr := make([]float32, l.batch*2*H)
		hh := make([]float32, l.batch*H)
		rh := make([]float32, l.batch*H)
		l.run(d, h, func(t int, active []int) {
			x := xw[t*l.batch*3*H : (t+1)*l.batch*3*H]
			for b := range l.batch {
				copy(zr[b*2*H:(b+1)*2*H], x[b*3*H:b*3*H+2*H])
			}
			l.recurrence(c.Threads, d, 0, h, zr, serial)
			for _, b := range active {
				l.acts[d][0].apply(zr[b*2*H:(b+1)*2*H], l.clip)
			}
			if lbr {
				clear(hh)
				l.recurrence(c.Threads, d, 1, h, hh, serial)
				for _, b := range active {
					row, r := hh[b*H:(b+1)*H], zr[b*2*H+H:(b+1)*2*H]
					xh := x[b*3*H+2*H : (b+1)*3*H]
					for j := range row {
						row[j] = xh[j] + r[j]*(row[j]+rbh[j])
					}
				}
			} else {
				for b := range l.batch {
					r := zr[b*2*H+H : (b+1)*2*H]
					for j, v := range h[b*H : (b+1)*H] {
						rh[b*H+j] = r[j] * v
					}
					copy(hh[b*H:(b+1)*H], x[b*3*H+2*H:(b+1)*3*H])
				}
				l.recurrence(c.Threads, d, 1, rh, hh, serial)
			}
			for _, b := range active {
				row := hh[b*H : (b+1)*H]
				l.acts[d][1].apply(row, l.clip)
				z := zr[b*2*H : b*2*H+H]
				state := h[b*H : (b+1)*H]
				for j, v := range row {
					state[j] = (1-z[j])*v + z[j]*state[j]
				}
			}
		})
		copy(l.yh[d*l.batch*H:], h)
	})
	l.outputs(c)
	return nil
}

// lstmKernel is ONNX LSTM (gates i, o, f, c, peepholes P = [Pi Po Pf]):
//
//	iₜ = f(Xₜ·Wiᵀ + Hₜ₋₁·Riᵀ + Pi⊙Cₜ₋₁ + Wbi + Rbi),
//	fₜ = f(… + Pf⊙Cₜ₋₁ …), or 1 − iₜ with input_forget,
//	cₜ = g(Xₜ·Wcᵀ + Hₜ₋₁·Rcᵀ + Wbc + Rbc),
//	Cₜ = fₜ⊙Cₜ₋₁ + iₜ⊙cₜ,
//	oₜ = f(Xₜ·Woᵀ + Hₜ₋₁·Roᵀ + Po⊙Cₜ + Wbo + Rbo),
//	Hₜ = oₜ⊙h(Cₜ).
func lstmKernel(c *Call) error {
	l, err := rnnSetup(c, 4, []string{"Sigmoid", "Tanh", "Tanh"}, 0, 4)
	if err != nil {
		return err
	}
	if l.c0, err = l.state(c, 6, "initial_c"); err != nil {
		return err
	}
	H := l.hidden
	l.p = make([]float32, l.dirs*3*H)
	if p := c.Tensor(7); p != nil {
		if !f32Family(p.DType) || !slicesEqual(p.Shape, []int64{int64(l.dirs), int64(3 * H)}) {
			return c.Errorf("P %s%v must be [%d %d]", p.DType, p.Shape, l.dirs, 3*H)
		}
		l.p = f32Data(p)
	}
	inputForget := ops.Params[ops.LSTMParams](c.Node, c.Opset).InputForget != 0
	l.wantsY(c)
	l.yc = make([]float32, l.dirs*l.batch*H)
	l.directions(c.Threads, func(d int, serial bool) {
		xwBuf := l.inputProjection(c.Threads, d, serial, func(int) bool { return true })
		defer gemmBufs.Put(xwBuf)
		xw := *xwBuf
		pi, po, pf := l.p[d*3*H:d*3*H+H], l.p[d*3*H+H:d*3*H+2*H], l.p[d*3*H+2*H:(d+1)*3*H]
		f, g, hAct := l.acts[d][0], l.acts[d][1], l.acts[d][2]
		h := append([]float32{}, l.h0[d*l.batch*H:(d+1)*l.batch*H]...)
		cell := append([]float32{}, l.c0[d*l.batch*H:(d+1)*l.batch*H]...)
		gates := make([]float32, l.batch*4*H)
		l.run(d, h, func(t int, active []int) {
			copy(gates, xw[t*l.batch*4*H:(t+1)*l.batch*4*H])
			l.recurrence(c.Threads, d, 0, h, gates, serial)
			for _, b := range active {
				row := gates[b*4*H : (b+1)*4*H]
				gi, gof, gf, gc := row[:H], row[H:2*H], row[2*H:3*H], row[3*H:]
				cs := cell[b*H : (b+1)*H]
				for j := range gi {
					gi[j] += pi[j] * cs[j]
					gf[j] += pf[j] * cs[j]
				}
				f.apply(gi, l.clip)
				if inputForget {
					for j, v := range gi {
						gf[j] = 1 - v
					}
				} else {
					f.apply(gf, l.clip)
				}
				g.apply(gc, l.clip)
				for j := range cs {
					cs[j] = gf[j]*cs[j] + gi[j]*gc[j]
					gof[j] += po[j] * cs[j]
				}
				f.apply(gof, l.clip)
				hs := h[b*H : (b+1)*H]
				copy(hs, cs)
				hAct.apply(hs, 0)
				for j := range hs {
					hs[j] *= gof[j]
				}
			}
		})
		copy(l.yh[d*l.batch*H:], h)
		copy(l.yc[d*l.batch*H:], cell)
	})
	l.outputs(c)
	return nil
}
