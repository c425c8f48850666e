package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Kernels of the nodes that the planner's fusion passes create (domain
// ops.FusedDomain): an op followed by an activation, which is applied to
// each block of output while it is still in cache.

func init() {
	RegisterDomain(ops.FusedDomain, "FusedConv", fusedConvKernel)
	RegisterDomain(ops.FusedDomain, "LayerNormalization", layerNormKernel)
	RegisterDomain(ops.FusedDomain, "FusedMatMul", fusedMatMulKernel)
}

// fusedMatMulKernel is FusedMatMul: MatMul of inputs 0 and 1, plus the
// float32 vector input 2 on every row of the product, added while the
// product is in cache.
func fusedMatMulKernel(c *Call) error {
	bias := c.Tensor(2)
	if bias == nil || bias.DType != graph.Float || bias.Rank() != 1 {
		return c.Errorf("Bias must be a float32 vector")
	}
	if err := matmulKernel(c); err != nil {
		return err
	}
	y := c.Out[0].(*graph.Tensor)
	if y.DType != graph.Float || y.Rank() == 0 || y.Shape[y.Rank()-1] != bias.Shape[0] {
		return c.Errorf("Bias %s%v does not match the product %s%v", bias.DType, bias.Shape, y.DType, y.Shape)
	}
	b, out := graph.View[float32](bias), graph.View[float32](y)
	for r := 0; r < len(out); r += len(b) {
		row := out[r : r+len(b)]
		for i, v := range b {
			row[i] += v
		}
	}
	return nil
}

// fusedConvKernel is FusedConv: Conv, then the node's activation.
func fusedConvKernel(c *Call) error {
	act, err := fusedActivation(c)
	if err != nil {
		return err
	}
	return convWith(c, act)
}

// convAct is an activation applied in place to float32 output blocks.
type convAct struct {
	name string
	// lo and hi are Clip's bounds (Relu: 0 and +Inf); p holds LeakyRelu's
	// slope in alpha.
	lo, hi float32
	p      unaryParams
}

// fusedActivation reads a fused node's activation attributes.
func fusedActivation(c *Call) (*convAct, error) {
	a := &convAct{name: c.Node.AttrString("activation", ""), lo: 0, hi: float32(math.Inf(1))}
	switch a.name {
	case ops.ActRelu, ops.ActSigmoid:
	case ops.ActClip:
		a.lo, a.hi = c.Node.AttrFloat("alpha", float32(math.Inf(-1))), c.Node.AttrFloat("beta", float32(math.Inf(1)))
	case ops.ActLeakyRelu:
		a.p.alpha = float64(c.Node.AttrFloat("alpha", 0.01))
	default:
		return nil, c.Unsupported("fused activation %q", a.name)
	}
	return a, nil
}

// apply runs the activation in place over rows×cols values of y, rows ld
// apart (the element loops read s[i] before writing d[i]); a nil
// activation does nothing.
func (a *convAct) apply(y []float32, rows, cols, ld int) {
	if a == nil {
		return
	}
	for r := range rows {
		row := y[r*ld : r*ld+cols]
		switch a.name {
		case ops.ActRelu, ops.ActClip:
			clampF32(row, a.lo, a.hi)
		case ops.ActLeakyRelu:
			leakyReluLoop(row, row, &a.p)
		case ops.ActSigmoid:
			sigmoidLoop(row, row, &a.p)
		}
	}
}

// clampF32 sets each element of y to min(max(v, lo), hi) in place; NaN
// stays NaN.
func clampF32(y []float32, lo, hi float32) {
	for i, v := range y {
		y[i] = min(max(v, lo), hi)
	}
}
