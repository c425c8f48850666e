package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterChecked("LpNormalization", lpNormKernel, onFloats)
	RegisterChecked("MeanVarianceNormalization", mvnKernel, onFloats)
	RegisterChecked("LRN", lrnKernel, onFloats)
}

// normInput returns input 0, a tensor of the f32Family (see onFloats).
func normInput(c *Call) (*graph.Tensor, error) {
	x := c.Tensor(0)
	if x == nil {
		return nil, c.Errorf("input is required")
	}
	return x, nil
}

// lpNormKernel is ONNX LpNormalization: x divided by its L1 or L2 norm
// along axis.
func lpNormKernel(c *Call) error {
	x, err := normInput(c)
	if err != nil {
		return err
	}
	p := ops.Params[ops.LpNormalizationParams](c.Node, c.Opset).P
	if p != 1 && p != 2 {
		return c.Errorf("p = %d must be 1 or 2", p)
	}
	rank := x.Rank()
	axis := int(ops.AxisParamOf(c.Node, c.Opset).Axis)
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return c.Errorf("axis %d out of range for rank %d", ops.AxisParamOf(c.Node, c.Opset).Axis, rank)
	}
	n := int(x.Shape[axis])
	inner := int(graph.NumElements(x.Shape[axis+1:]))
	outer := int(graph.NumElements(x.Shape[:axis]))
	y := c.Output(0, x.DType, x.Shape)
	out := f32Target(y)
	xv := f32Data(x)
	c.Threads.For(outer*inner, max(1, 4096/max(n, 1)), func(lo, hi int) {
		for l := lo; l < hi; l++ {
			base := (l/inner)*n*inner + l%inner
			var s float64
			for i := range n {
				v := float64(xv[base+i*inner])
				if p == 1 {
					s += math.Abs(v)
				} else {
					s += v * v
				}
			}
			if p == 2 {
				s = math.Sqrt(s)
			}
			for i := range n {
				out[base+i*inner] = float32(float64(xv[base+i*inner]) / s)
			}
		}
	})
	f32Commit(y, out)
	return nil
}

// mvnKernel is ONNX MeanVarianceNormalization: (x − mean)/(std + 1e-9)
// with the mean and population standard deviation taken over axes
// (default [0, 2, 3]).
func mvnKernel(c *Call) error {
	x, err := normInput(c)
	if err != nil {
		return err
	}
	rank := x.Rank()
	reduced := make([]bool, rank)
	for _, a := range ops.Params[ops.MeanVarianceNormalizationParams](c.Node, c.Opset).Axes {
		if a < 0 {
			a += int64(rank)
		}
		if a < 0 || a >= int64(rank) {
			return c.Errorf("axes %v out of range for rank %d", ops.Params[ops.MeanVarianceNormalizationParams](c.Node, c.Opset).Axes, rank)
		}
		reduced[a] = true
	}
	// Each element belongs to the group given by its coordinates along
	// the axes that are kept.
	groups := 1
	for d := range rank {
		if !reduced[d] {
			groups *= int(x.Shape[d])
		}
	}
	xv := f32Data(x)
	group := make([]int32, len(xv))
	idx, sizes := make([]int, rank), make([]int, rank)
	for d := range rank {
		sizes[d] = int(x.Shape[d])
	}
	for i := range group {
		g := 0
		for d := range rank {
			if !reduced[d] {
				g = g*sizes[d] + idx[d]
			}
		}
		group[i] = int32(g)
		convNextIndex(idx, sizes)
	}
	sum, sq, cnt := make([]float64, groups), make([]float64, groups), make([]float64, groups)
	for i, v := range xv {
		sum[group[i]] += float64(v)
		cnt[group[i]]++
	}
	for g := range sum {
		sum[g] /= max(cnt[g], 1)
	}
	for i, v := range xv {
		d := float64(v) - sum[group[i]]
		sq[group[i]] += d * d
	}
	for g := range sq {
		sq[g] = math.Sqrt(sq[g]/max(cnt[g], 1)) + 1e-9
	}
	y := c.Output(0, x.DType, x.Shape)
	out := f32Target(y)
	for i, v := range xv {
		g := group[i]
		out[i] = float32((float64(v) - sum[g]) / sq[g])
	}
	f32Commit(y, out)
	return nil
}

// lrnKernel is ONNX LRN: x / (bias + alpha/size · Σ x²)^beta, the sum over
// the channels c − ⌊(size−1)/2⌋ … c + ⌈(size−1)/2⌉ at the same position.
func lrnKernel(c *Call) error {
	x, err := normInput(c)
	if err != nil {
		return err
	}
	if x.Rank() < 2 {
		return c.Errorf("X%v must have rank ≥ 2", x.Shape)
	}
	p := ops.Params[ops.LRNParams](c.Node, c.Opset)
	size := int(p.Size)
	if size < 1 {
		return c.Errorf("size %d must be positive", size)
	}
	alpha := float64(p.Alpha) / float64(size)
	beta := float64(p.Beta)
	bias := float64(p.Bias)
	below, above := (size-1)/2, size/2
	n, ch := int(x.Shape[0]), int(x.Shape[1])
	plane := int(graph.NumElements(x.Shape[2:]))
	y := c.Output(0, x.DType, x.Shape)
	out := f32Target(y)
	xv := f32Data(x)
	c.Threads.For(n, 1, func(lo, hi int) {
		sum := make([]float64, plane)
		for b := lo; b < hi; b++ {
			img := xv[b*ch*plane : (b+1)*ch*plane]
			clear(sum)
			for k := range min(above, ch) {
				for i, v := range img[k*plane : (k+1)*plane] {
					sum[i] += float64(v) * float64(v)
				}
			}
			for k := range ch {
				if add := k + above; add < ch {
					for i, v := range img[add*plane : (add+1)*plane] {
						sum[i] += float64(v) * float64(v)
					}
				}
				if drop := k - below - 1; drop >= 0 {
					for i, v := range img[drop*plane : (drop+1)*plane] {
						sum[i] -= float64(v) * float64(v)
					}
				}
				dst := out[(b*ch+k)*plane : (b*ch+k+1)*plane]
				for i, v := range img[k*plane : (k+1)*plane] {
					dst[i] = float32(float64(v) / math.Pow(bias+alpha*max(sum[i], 0), beta))
				}
			}
		}
	})
	f32Commit(y, out)
	return nil
}
