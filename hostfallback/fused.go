package hostfallback

import (
	"fmt"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// Kernels of the nodes that the planner's fusion passes create (domain
// ops.FusedDomain): an op followed by an activation, which is applied to
// each block of output while it is still in cache.

func init() {
	RegisterDomainChecked(ops.FusedDomain, "FusedConv", halfVia32(fusedConvKernel), onFused)
	RegisterDomainChecked(ops.FusedDomain, "NormConv", halfVia32(normConvKernel), onFused)
	RegisterDomainChecked(ops.FusedDomain, "FusedBatchNorm", halfVia32(fusedBatchNormKernel), onFused)
	RegisterDomainChecked(ops.FusedDomain, "LayerNormalization", layerNormKernel, layerNormSupport)
	RegisterDomainChecked(ops.FusedDomain, "FusedMatMul", halfVia32(fusedMatMulKernel), onFused)
	RegisterDomainChecked(ops.FusedDomain, "MatMulTransB", matmulTransBKernel, matmulTransBSupport)
}

// matmulTransBSupport is MatMulTransB's: A and B of one floating-point
// type, B of rank 2 or more where its rank is known.
var matmulTransBSupport = Support{In: onFloats.In, Check: func(q planner.Query) string {
	if len(q.Inputs) < 2 {
		return ""
	}
	a, b := q.Inputs[0], q.Inputs[1]
	if a != nil && b != nil && a.Kind == graph.TensorKind && b.Kind == graph.TensorKind &&
		a.Elem != graph.Undefined && b.Elem != graph.Undefined && a.Elem != b.Elem {
		return fmt.Sprintf("A of element type %s and B of %s (the CPU kernel takes one type for both)", a.Elem, b.Elem)
	}
	if b != nil && b.Kind == graph.TensorKind && b.Shape != nil && len(b.Shape) < 2 {
		return fmt.Sprintf("B of rank %d (the CPU kernel takes rank 2 or more)", len(b.Shape))
	}
	return ""
}}

// onFused is the support of FusedConv, FusedBatchNorm, FusedMatMul and
// ScaledDotProductAttention: float32 tensors, and float16 ones, computed
// in float32 (the planner fuses float16 nodes for a GPU's float16 kernels
// and for the CPU's, and the CPU checks the GPU's).
var onFused = Support{In: []Types{{graph.Float, graph.Float16}}}

// halfVia32 returns k for float32 nodes and k computed in float32 (see
// viaFloat32) for float16 ones.
func halfVia32(k Kernel) Kernel {
	return func(c *Call) error {
		if x := c.Tensor(0); x != nil && x.DType == graph.Float16 {
			return viaFloat32(c, graph.Float16, k)
		}
		return k(c)
	}
}

// matmulTransBKernel is MatMulTransB: MatMul of A and B with B's last two
// axes swapped, each matrix of B read transposed where it lies.
func matmulTransBKernel(c *Call) error {
	a, b := c.Tensor(0), c.Tensor(1)
	if a == nil || b == nil {
		return c.Errorf("inputs A and B are required")
	}
	if a.DType != b.DType || !f32Family(a.DType) {
		return c.Errorf("A is %s and B is %s; want both float32, float16 or bfloat16", a.DType, b.DType)
	}
	if b.Rank() < 2 {
		return c.Errorf("B must have rank ≥ 2, got %v", b.Shape)
	}
	p, err := Memo(c, c.ShapeKey(), func() (*matmulShape, error) {
		bt := slices.Clone(b.Shape)
		bt[len(bt)-2], bt[len(bt)-1] = bt[len(bt)-1], bt[len(bt)-2]
		return matmulPlan(c, a.Shape, bt)
	})
	if err != nil {
		return err
	}
	y := c.OutputUninit(0, a.DType, p.out)
	out := f32Target(y)
	matmulF32(c.Threads, p, true, f32Data(a), f32Data(b), out, 0)
	f32Commit(y, out)
	return nil
}

// fusedMatMulKernel is FusedMatMul: MatMul of inputs 0 and 1, plus the
// float32 vector input 2 on every row of the product, which the GEMM adds
// the product to.
func fusedMatMulKernel(c *Call) error {
	bias := c.Tensor(2)
	if bias == nil || bias.DType != graph.Float || bias.Rank() != 1 {
		return c.Errorf("Bias must be a float32 vector")
	}
	return matmulBias(c, bias)
}

// fusedConvKernel is FusedConv: Conv, plus the optional input 3 (Sum, of
// the output's type and shape), then the node's activation.
func fusedConvKernel(c *Call) error {
	act, err := fusedActivation(c)
	if err != nil {
		return err
	}
	if sum := c.Tensor(3); sum != nil {
		x, w := c.Tensor(0), c.Tensor(1)
		if x == nil || w == nil || sum.DType != x.DType {
			return c.Errorf("Sum must be of X's type")
		}
		l, err := convPlanMemo(c, x.Shape, w.Shape)
		if err != nil {
			return err
		}
		if want := convShape([]int64{int64(l.n), int64(l.m)}, l.out); !slices.Equal(sum.Shape, want) {
			return c.Errorf("Sum%v does not match the output%v", sum.Shape, want)
		}
		act.sum = f32Data(sum)
	}
	return convWith(c, act, nil)
}

// normConvKernel is NormConv: FusedConv of X normalized, each tile of it
// as the convolution reads it (see convNorm).
func normConvKernel(c *Call) error {
	act, err := fusedActivation(c)
	if err != nil {
		return err
	}
	name, alpha, beta, err := ops.NormActivation(c.Node, c.Opset)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	nact, err := convActOf(c, name, alpha, beta)
	if err != nil {
		return err
	}
	return convWith(c, act, &convNorm{act: nact})
}

// convAct is what a fused convolution applies in place to its float32
// output blocks: the addition of sum, then an activation.
type convAct struct {
	// name is the activation, "" for none.
	name string
	// lo and hi are Clip's bounds (Relu: 0 and +Inf); p holds LeakyRelu's
	// slope in alpha, HardSigmoid's and HardSwish's slope and offset in
	// alpha and beta.
	lo, hi float32
	p      unaryParams
	// sum, when not nil, holds a value for each output element, in the
	// output's layout.
	sum []float32
}

// fusedActivation reads a fused node's activation attributes (FusedConv's,
// NormConv's or FusedBatchNorm's).
func fusedActivation(c *Call) (*convAct, error) {
	name, alpha, beta, err := ops.FusedActivation(c.Node, c.Opset)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	return convActOf(c, name, alpha, beta)
}

// convActOf is the convAct of a fused activation and its parameters.
func convActOf(c *Call, name string, alpha, beta float32) (*convAct, error) {
	a := &convAct{name: name, lo: 0, hi: float32(math.Inf(1))}
	switch a.name {
	case "", ops.ActRelu, ops.ActSigmoid, ops.ActSwish:
	case ops.ActClip:
		a.lo, a.hi = alpha, beta
	case ops.ActLeakyRelu:
		a.p.alpha = float64(alpha)
	case ops.ActHardSigmoid:
		a.p.alpha, a.p.beta = float64(alpha), float64(beta)
	case ops.ActHardSwish:
		a.p = hardSwishParams(nil)
	default:
		return nil, c.Unsupported("fused activation %q", a.name)
	}
	return a, nil
}

// apply adds sum (when not nil) to rows×cols values of y, rows ld apart
// from y[at], then runs the activation on them, in place (the element
// loops read s[i] before writing d[i]); a nil convAct does nothing.
func (a *convAct) apply(y []float32, at, rows, cols, ld int) {
	if a == nil {
		return
	}
	if ld == cols {
		rows, cols = 1, rows*cols
	}
	for r := range rows {
		row := y[at+r*ld : at+r*ld+cols]
		if a.sum != nil {
			for i, v := range a.sum[at+r*ld : at+r*ld+cols] {
				row[i] += v
			}
		}
		switch a.name {
		case ops.ActRelu, ops.ActClip:
			clampF32(row, a.lo, a.hi)
		case ops.ActLeakyRelu:
			leakyReluLoop(row, row, &a.p)
		case ops.ActSigmoid, ops.ActSwish:
			sigmoidF32(row, a.name == ops.ActSwish)
		case ops.ActHardSigmoid, ops.ActHardSwish:
			hardSigmoidF32(row, row, float32(a.p.alpha), float32(a.p.beta), a.name == ops.ActHardSwish)
		}
	}
}

// epilogue is a's work as the epilogue of a GEMM (see gemmEpilogue)
// whose C starts at y[base], y the output a's sum is laid out like, so
// that each block of output gets it on the goroutine that computed it,
// while in its cache; nil only when a does nothing.
func (a *convAct) epilogue(base int) gemmEpilogue {
	if a == nil || (a.sum == nil && a.name == "") {
		return nil
	}
	lo, hi := a.lo, a.hi
	switch a.name {
	case ops.ActRelu, ops.ActClip:
	case "":
		lo, hi = float32(math.Inf(-1)), float32(math.Inf(1))
	default:
		at := *a
		if a.sum != nil {
			at.sum = a.sum[base:]
		}
		return &convActEpilogue{&at}
	}
	return &convClamp{sum: a.sum, base: base, lo: lo, hi: hi}
}

// convActEpilogue is the epilogue of a fused convolution whose activation
// is not a clamp: act (its sum, when not nil, matching C) on each block.
type convActEpilogue struct{ act *convAct }

func (e *convActEpilogue) finish(c []float32, at, rows, cols, ldc int) {
	e.act.apply(c, at, rows, cols, ldc)
}

func (e *convActEpilogue) perStrip() bool { return false }

// convClamp is the epilogue of a fused convolution whose activation is a
// clamp: the addition of sum (when not nil; sum[base] matches C's first
// element), then the clamp to [lo, hi].
type convClamp struct {
	sum    []float32
	base   int
	lo, hi float32
}

func (e *convClamp) perStrip() bool { return true }

func (e *convClamp) finish(c []float32, at, rows, cols, ldc int) {
	var s []float32
	if e.sum != nil {
		s = e.sum[e.base:]
	}
	clampAddF32(c, s, at, rows, cols, ldc, e.lo, e.hi)
}

// clampAddF32Go is the portable clampAddF32.
func clampAddF32Go(y, s []float32, at, rows, cols, ld int, lo, hi float32) {
	for r := range rows {
		row := y[at+r*ld : at+r*ld+cols]
		if s != nil {
			for i, v := range s[at+r*ld : at+r*ld+cols] {
				row[i] += v
			}
		}
		clampF32Go(row, lo, hi)
	}
}

// sigmoidF32Go is the portable sigmoidF32.
func sigmoidF32Go(y []float32, swish bool) {
	for i, v := range y {
		s := float32(1 / (1 + math.Exp(-float64(v))))
		if swish {
			s *= v
		}
		y[i] = s
	}
}

// hardSigmoidF32Go is the portable hardSigmoidF32. The explicit
// conversion rounds the product before the sum, as the vector kernels do
// (Go may otherwise fuse them).
func hardSigmoidF32Go(d, s []float32, alpha, beta float32, swish bool) {
	for i, v := range s[:len(d)] {
		h := max(0, min(1, float32(alpha*v)+beta))
		if swish {
			h *= v
		}
		d[i] = h
	}
}

// affineF32Go is the portable affineF32.
func affineF32Go(d, s []float32, a, b float32) {
	for i, v := range s[:len(d)] {
		d[i] = float32(v*a) + b
	}
}

// clampF32Go is the portable clampF32.
func clampF32Go(y []float32, lo, hi float32) {
	for i, v := range y {
		if v < lo {
			y[i] = lo
		} else if v > hi {
			y[i] = hi
		}
	}
}
