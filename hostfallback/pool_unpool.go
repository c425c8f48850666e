package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("MaxUnpool", maxUnpoolKernel)
	Register("MaxRoiPool", maxRoiPoolKernel)
}

// maxUnpoolKernel is ONNX MaxUnpool: a zero tensor of the unpooled shape
// ((in−1)·stride − pads + kernel per spatial axis) with each X value
// stored at the flat position its index in I gives. With the output_shape
// input the pads are ignored and the output extended (or cut) at the end
// of each axis to that shape, the indices keeping their coordinates.
func maxUnpoolKernel(c *Call) error {
	x, ind := c.Tensor(0), c.Tensor(1)
	if x == nil || ind == nil {
		return c.Errorf("inputs X and I are required")
	}
	if !f32Family(x.DType) {
		return c.Unsupported("MaxUnpool of %s", x.DType)
	}
	if ind.DType != graph.Int64 || !slicesEqual(ind.Shape, x.Shape) {
		return c.Errorf("I %s%v must be int64 of X's shape %v", ind.DType, ind.Shape, x.Shape)
	}
	if x.Rank() < 3 {
		return c.Errorf("X%v must have rank ≥ 3", x.Shape)
	}
	in := make([]int, x.Rank()-2)
	for i := range in {
		in[i] = int(x.Shape[i+2])
	}
	g, err := convAttrs(c, in, nil)
	if err != nil {
		return err
	}
	st := c.Tensor(2)
	base := convShape(x.Shape[:2], nil)
	for d := range g.rank {
		size := g.kernel[d] - g.stride[d]
		if in[d] > 0 {
			span, ok := graph.MulSize(int64(in[d]-1), int64(g.stride[d]))
			if !ok || span > graph.MaxBytes {
				return c.Errorf("strides %v: the output along spatial axis %d (input %d) is too large", g.stride, d, in[d])
			}
			size = int(span) + g.kernel[d]
		}
		if st == nil {
			size -= g.padBegin[d] + g.padEnd[d]
		}
		base = append(base, int64(size))
	}
	shape := base
	if st != nil {
		if shape, err = st.Int64s(); err != nil {
			return c.Errorf("output_shape: %w", err)
		}
		if len(shape) != x.Rank() {
			return c.Errorf("output_shape %v must have X's rank %d", shape, x.Rank())
		}
	}
	for _, s := range [][]int64{base, shape} {
		if err := c.Check(x.DType, s); err != nil {
			return err
		}
	}
	y := c.Output(0, x.DType, shape)
	out := f32Target(y)
	baseSize := graph.NumElements(base)
	for i, v := range f32Data(x) {
		at := graph.View[int64](ind)[i]
		if at < 0 || at >= baseSize {
			return c.Errorf("index %d outside the unpooled shape %v", at, base)
		}
		var to int64
		for d, stride := int64(0), baseSize; d < int64(len(base)); d++ {
			stride /= base[d]
			coord := at / stride % base[d]
			if coord >= shape[d] {
				return c.Errorf("index %d falls outside output_shape %v", at, shape)
			}
			to = to*shape[d] + coord
		}
		out[to] = v
	}
	f32Commit(y, out)
	return nil
}

// slicesEqual reports whether two shapes are equal.
func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maxRoiPoolKernel is ONNX MaxRoiPool, as Caffe's ROI pooling: each
// region [batch, x1, y1, x2, y2] (scaled by spatial_scale and rounded) is
// divided into pooled_shape bins whose maxima form the output [rois, C,
// ph, pw]; an empty bin gives 0.
func maxRoiPoolKernel(c *Call) error {
	x, rois := c.Tensor(0), c.Tensor(1)
	if x == nil || rois == nil {
		return c.Errorf("inputs X and rois are required")
	}
	if !f32Family(x.DType) || !f32Family(rois.DType) {
		return c.Unsupported("MaxRoiPool of %s and %s", x.DType, rois.DType)
	}
	if x.Rank() != 4 || rois.Rank() != 2 || rois.Shape[1] != 5 {
		return c.Errorf("X%v must be 4-D and rois%v [num_rois, 5]", x.Shape, rois.Shape)
	}
	p := ops.Params[ops.MaxRoiPoolParams](c.Node, c.Opset)
	pooled := p.PooledShape
	if len(pooled) != 2 || pooled[0] < 1 || pooled[1] < 1 {
		return c.Errorf("pooled_shape %v must be two positive sizes", pooled)
	}
	scale := float64(p.SpatialScale)
	n, ch, H, W := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	PH, PW := int(pooled[0]), int(pooled[1])
	nr := int(rois.Shape[0])
	y := c.Output(0, x.DType, []int64{int64(nr), int64(ch), int64(PH), int64(PW)})
	out := f32Target(y)
	xv, rv := f32Data(x), f32Data(rois)
	for r := range nr {
		roi := rv[r*5 : r*5+5]
		b := int(roi[0])
		if b < 0 || b >= n {
			return c.Errorf("roi %d: batch index %v outside [0, %d)", r, roi[0], n)
		}
		x0 := int(math.Round(float64(roi[1]) * scale))
		y0 := int(math.Round(float64(roi[2]) * scale))
		x1 := int(math.Round(float64(roi[3]) * scale))
		y1 := int(math.Round(float64(roi[4]) * scale))
		binH := float64(max(y1-y0+1, 1)) / float64(PH)
		binW := float64(max(x1-x0+1, 1)) / float64(PW)
		for k := range ch {
			plane := xv[(b*ch+k)*H*W : (b*ch+k+1)*H*W]
			dst := out[(r*ch+k)*PH*PW : (r*ch+k+1)*PH*PW]
			for ph := range PH {
				h0 := min(max(int(math.Floor(float64(ph)*binH))+y0, 0), H)
				h1 := min(max(int(math.Ceil(float64(ph+1)*binH))+y0, 0), H)
				for pw := range PW {
					w0 := min(max(int(math.Floor(float64(pw)*binW))+x0, 0), W)
					w1 := min(max(int(math.Ceil(float64(pw+1)*binW))+x0, 0), W)
					if h1 <= h0 || w1 <= w0 {
						continue
					}
					best := float32(math.Inf(-1))
					for h := h0; h < h1; h++ {
						for _, v := range plane[h*W+w0 : h*W+w1] {
							best = max(best, v)
						}
					}
					dst[ph*PW+pw] = best
				}
			}
		}
	}
	f32Commit(y, out)
	return nil
}
