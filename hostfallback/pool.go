package hostfallback

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterChecked("MaxPool", maxPoolKernel, Support{In: []Types{maxPoolTypes}})
	RegisterChecked("AveragePool", averagePoolKernel, onFloats)
	RegisterChecked("LpPool", lpPoolKernel, onFloats)
	RegisterChecked("GlobalMaxPool", globalMaxPoolKernel, onFloats)
	RegisterChecked("GlobalAveragePool", globalAveragePoolKernel, onFloats)
	RegisterChecked("GlobalLpPool", globalLpPoolKernel, onFloats)
}

// poolLayout is a checked pooling: planes (batch × channels) of the
// spatial geometry, with each output position's window resolved per axis.
type poolLayout struct {
	*convGeom
	planes int
	// first[d][o] is the first input coordinate of output coordinate o's
	// window along axis d inside the input and count[d][o] the number of
	// its taps there (dilation apart); padded[d][o] counts its taps inside
	// the padded input.
	first, count, padded [][]int
	inStrides            []int
	// fast is the vectorised plan for 2-D planes, nil where it does not
	// apply (see poolFastPlan); maxPad MaxPool's, where it applies, in its
	// stead (see poolPaddedPlan).
	fast   *poolFast
	maxPad *poolPadded
}

// poolPlan checks X [N, C, D...] and the window attributes of a pooling
// node.
func poolPlan(c *Call, dt graph.DType, xs []int64) (*poolLayout, error) {
	if len(xs) < 3 {
		return nil, c.Errorf("X%v must have rank ≥ 3", xs)
	}
	in := make([]int, len(xs)-2)
	for i := range in {
		in[i] = int(xs[i+2])
	}
	g, err := convAttrs(c, in, nil)
	if err != nil {
		return nil, err
	}
	if err := ops.PoolPadsFit(g.kernel, g.dil, slices.Concat(g.padBegin, g.padEnd)); err != nil {
		return nil, c.Errorf("%w", err)
	}
	if err := g.forward(c, poolCeil(c)); err != nil {
		return nil, err
	}
	if err := c.Check(dt, convShape(xs[:2], g.out)); err != nil {
		return nil, err
	}
	p := &poolLayout{convGeom: g, planes: int(xs[0] * xs[1]), inStrides: convStrides(in)}
	for d := range g.rank {
		first, count, padded := make([]int, g.out[d]), make([]int, g.out[d]), make([]int, g.out[d])
		k, dil := g.kernel[d], g.dil[d]
		for o := range first {
			start := o*g.stride[d] - g.padBegin[d]
			k0 := 0
			if start < 0 {
				k0 = (-start + dil - 1) / dil
			}
			k1 := min(k, convFloorDiv(g.in[d]-1-start, dil)+1)
			count[o] = max(0, k1-k0)
			first[o] = start + k0*dil
			padded[o] = max(0, min(k, convFloorDiv(g.in[d]+g.padEnd[d]-1-start, dil)+1))
		}
		p.first, p.count, p.padded = append(p.first, first), append(p.count, count), append(p.padded, padded)
	}
	return p, nil
}

// outShape is the output shape: N, C and the output sizes.
func (p *poolLayout) outShape(xs []int64) []int64 { return convShape(xs[:2], p.out) }

// forPlanes runs f over the planes on several goroutines.
func (p *poolLayout) forPlanes(threads *Threads, f func(plane int)) {
	p.forPlaneRuns(threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f(i)
		}
	})
}

// forPlaneRuns is forPlanes calling f once for each run [lo, hi) of
// planes that a goroutine takes.
func (p *poolLayout) forPlaneRuns(threads *Threads, f func(lo, hi int)) {
	work := max(1, p.outSize*p.kernelSize)
	threads.For(p.planes, max(1, 16384/work), f)
}

// windows calls f for every output position of a plane with its index,
// the offset of its window's first in-input tap (−1 when the window holds
// no input value) and its coordinates.
func (p *poolLayout) windows(f func(pos, first int, o []int)) {
	r := p.rank
	o := make([]int, r)
	for pos := range p.outSize {
		first := 0
		for d := range r {
			if p.count[d][o[d]] == 0 {
				first = -1
				break
			}
			first += p.first[d][o[d]] * p.inStrides[d]
		}
		f(pos, first, o)
		convNextIndex(o, p.out)
	}
}

// runs calls f with the offset (relative to the window's first tap) and
// length of each run of in-input taps along the last axis; consecutive
// taps of a run are dilation apart.
func (p *poolLayout) runs(o []int, k []int, f func(off, n int)) {
	r := p.rank
	last := r - 1
	clear(k)
	n := p.count[last][o[last]]
	for {
		off := 0
		for d := range last {
			off += k[d] * p.dil[d] * p.inStrides[d]
		}
		f(off, n)
		d := last - 1
		for ; d >= 0; d-- {
			if k[d]++; k[d] < p.count[d][o[d]] {
				break
			}
			k[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// poolOrdered are the element types MaxPool handles natively.
type poolOrdered interface {
	~float32 | ~float64 | ~int8 | ~uint8
}

// maxPlane writes the window maxima of one input plane to y and, when
// idx is not nil, the input indices of the maxima (row-major within the
// plane, or column-major over the spatial axes when colMajor is set, plus
// base). NaNs are skipped; an all-padding window gives lowest and index −1.
func maxPlane[T poolOrdered](p *poolLayout, x, y []T, idx []int64, base int64, colMajor bool, lowest T) {
	k := make([]int, p.rank)
	st := p.dil[p.rank-1]
	p.windows(func(pos, first int, o []int) {
		best, at := lowest, -1
		if first >= 0 {
			p.runs(o, k, func(off, n int) {
				run := x[first+off:]
				for t := range n {
					v := run[t*st]
					if at < 0 || v > best || best != best {
						best, at = v, first+off+t*st
					}
				}
			})
		}
		y[pos] = best
		if idx != nil {
			idx[pos] = poolIndex(p, at, base, colMajor)
		}
	})
}

// poolIndex converts a row-major offset within a plane into MaxPool's
// Indices value.
func poolIndex(p *poolLayout, at int, base int64, colMajor bool) int64 {
	if at < 0 {
		return -1
	}
	if !colMajor {
		return base + int64(at)
	}
	v, stride := 0, 1
	for d := range p.rank {
		v += (at / p.inStrides[d] % p.in[d]) * stride
		stride *= p.in[d]
	}
	return base + int64(v)
}

// maxPoolTypes are the element types maxPoolKernel has a case for.
var maxPoolTypes = append(Types{graph.Int8, graph.Uint8}, floats...)

// maxPoolKernel is ONNX MaxPool with its optional Indices output.
func maxPoolKernel(c *Call) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	p, err := Memo(c, c.ShapeKey(), func() (*poolLayout, error) {
		p, err := poolPlan(c, x.DType, x.Shape)
		if err == nil && p.rank == 2 && f32Family(x.DType) {
			if p.maxPad = poolPaddedPlan(p); p.maxPad == nil {
				p.fast = poolFastPlan(p)
			}
		}
		return p, err
	})
	if err != nil {
		return err
	}
	y := c.Output(0, x.DType, p.outShape(x.Shape))
	var indices []int64
	if outputWanted(c, 1) {
		indices = graph.View[int64](c.Output(1, graph.Int64, p.outShape(x.Shape)))
	}
	colMajor := ops.Params[ops.MaxPoolParams](c.Node, c.Opset).StorageOrder != 0
	switch x.DType {
	case graph.Float:
		maxPool(c.Threads, p, graph.View[float32](x), graph.View[float32](y), indices, colMajor, -math.MaxFloat32)
	case graph.Double:
		maxPool(c.Threads, p, graph.View[float64](x), graph.View[float64](y), indices, colMajor, -math.MaxFloat64)
	case graph.Int8:
		maxPool(c.Threads, p, graph.View[int8](x), graph.View[int8](y), indices, colMajor, math.MinInt8)
	case graph.Uint8:
		maxPool(c.Threads, p, graph.View[uint8](x), graph.View[uint8](y), indices, colMajor, 0)
	case graph.Float16, graph.BFloat16:
		out := f32Target(y)
		maxPool(c.Threads, p, f32Data(x), out, indices, colMajor, float32(math.Inf(-1)))
		f32Commit(y, out)
	default:
		return c.Unsupported("MaxPool of %s", x.DType)
	}
	return nil
}

func maxPool[T poolOrdered](threads *Threads, p *poolLayout, x, y []T, indices []int64, colMajor bool, lowest T) {
	var fast *poolFast
	var maxPad *poolPadded
	if _, f32 := any(x).([]float32); f32 && indices == nil {
		fast, maxPad = p.fast, p.maxPad
	}
	if maxPad != nil {
		xf, yf := any(x).([]float32), any(y).([]float32)
		p.forPlaneRuns(threads, func(lo, hi int) {
			buf := gemmBuf(maxPad.size())
			defer gemmBufs.Put(buf)
			maxPad.fillNaN(*buf)
			for i := lo; i < hi; i++ {
				maxPad.plane(p, xf[i*p.inSize:(i+1)*p.inSize], yf[i*p.outSize:(i+1)*p.outSize], *buf)
			}
		})
		return
	}
	p.forPlanes(threads, func(i int) {
		var idx []int64
		if indices != nil {
			idx = indices[i*p.outSize : (i+1)*p.outSize]
		}
		if p.rank == 2 && idx == nil {
			xi, yi := x[i*p.inSize:(i+1)*p.inSize], y[i*p.outSize:(i+1)*p.outSize]
			if fast != nil {
				fast.plane(p, any(xi).([]float32), any(yi).([]float32), func(_, _ int, dst, src []float32, offs []int) { maxRows(dst, src, offs) }, maxRowsPitch)
				maxPlane2D(p, xi, yi, lowest, fast.skip0, fast.skip1)
				return
			}
			maxPlane2D(p, xi, yi, lowest, 0, 0)
			return
		}
		maxPlane(p, x[i*p.inSize:(i+1)*p.inSize], y[i*p.outSize:(i+1)*p.outSize], idx, int64(i*p.inSize), colMajor, lowest)
	})
}

// maxPlane2D is maxPlane for two spatial axes without indices, with the
// windows walked directly (same taps, same order, same NaN rule). It
// leaves the output columns [skip0, skip1) of the rows with input rows
// under their windows to the caller (poolFast).
func maxPlane2D[T poolOrdered](p *poolLayout, x, y []T, lowest T, skip0, skip1 int) {
	dh, dw := p.dil[0]*p.in[1], p.dil[1]
	p.windows2D(skip0, skip1, func(at, start, rn, cn int) {
		if rn == 0 || cn == 0 {
			y[at] = lowest
			return
		}
		win := x[start:]
		best := win[0]
		for i := range rn {
			row := win[i*dh : i*dh+(cn-1)*dw+1]
			for j := 0; j < len(row); j += dw {
				if v := row[j]; v > best || best != best {
					best = v
				}
			}
		}
		y[at] = best
	})
}

// windows2D calls f for each output position of a plane with two spatial
// axes, but for the columns [skip0, skip1) of the rows with input rows
// under their windows: with its index in the plane, the plane offset of
// its window's first in-input tap, and the numbers of its in-input rows
// and columns.
func (p *poolLayout) windows2D(skip0, skip1 int, f func(at, start, rn, cn int)) {
	W, OW := p.in[1], p.out[1]
	for oh := range p.out[0] {
		r0, rn := p.first[0][oh], p.count[0][oh]
		for ow := 0; ow < OW; ow++ {
			if ow == skip0 && rn > 0 && skip1 > skip0 {
				ow = skip1 - 1
				continue
			}
			f(oh*OW+ow, r0*W+p.first[1][ow], rn, p.count[1][ow])
		}
	}
}

// averagePoolKernel is ONNX AveragePool: the mean over each window of the
// taps inside the input, or, with count_include_pad, the sum divided by
// the number of taps inside the padded input.
func averagePoolKernel(c *Call) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	p, err := Memo(c, c.ShapeKey(), func() (*poolLayout, error) {
		p, err := poolPlan(c, x.DType, x.Shape)
		if err == nil && p.rank == 2 {
			p.fast = poolFastPlan(p)
		}
		return p, err
	})
	if err != nil {
		return err
	}
	includePad := ops.Params[ops.AveragePoolParams](c.Node, c.Opset).CountIncludePad != 0
	y := c.Output(0, x.DType, p.outShape(x.Shape))
	out := f32Target(y)
	xv := f32Data(x)
	if p.rank == 2 {
		p.forPlanes(c.Threads, func(i int) {
			avgPlane2D(p, xv[i*p.inSize:(i+1)*p.inSize], out[i*p.outSize:(i+1)*p.outSize], includePad)
		})
		f32Commit(y, out)
		return nil
	}
	st := p.dil[p.rank-1]
	p.forPlanes(c.Threads, func(i int) {
		xp, yp := xv[i*p.inSize:(i+1)*p.inSize], out[i*p.outSize:(i+1)*p.outSize]
		k := make([]int, p.rank)
		p.windows(func(pos, first int, o []int) {
			var sum float32
			if first >= 0 {
				p.runs(o, k, func(off, n int) {
					run := xp[first+off:]
					for t := range n {
						sum += run[t*st]
					}
				})
			}
			n := 1
			for d := range p.rank {
				if includePad {
					n *= p.padded[d][o[d]]
				} else {
					n *= p.count[d][o[d]]
				}
			}
			if n > 0 {
				yp[pos] = sum / float32(n)
			}
		})
	})
	f32Commit(y, out)
	return nil
}

// avgPlane2D is AveragePool of one plane with two spatial axes: each
// window's in-input taps summed row by row in float32 and divided by their
// number or, with includePad, by the number of taps in the padded input
// (a window without any leaves its output as it is, zero). The interior
// columns go tap by tap over whole rows (p.fast, where it applies).
func avgPlane2D(p *poolLayout, x, y []float32, includePad bool) {
	W, OW := p.in[1], p.out[1]
	dh, dw := p.dil[0]*W, p.dil[1]
	divisor := func(oh, ow int) int {
		if includePad {
			return p.padded[0][oh] * p.padded[1][ow]
		}
		return p.count[0][oh] * p.count[1][ow]
	}
	skip0, skip1 := 0, 0
	if f := p.fast; f != nil {
		skip0, skip1 = f.skip0, f.skip1
		// The fast path's windows all have input taps, and a call's
		// outputs one divisor: an edge column alone, or interior columns,
		// whose windows lie wholly in the input along the last axis.
		f.plane(p, x, y, func(oh, ow int, dst, src []float32, offs []int) {
			meanRows(dst, src, offs, float32(divisor(oh, ow)))
		}, nil)
	}
	p.windows2D(skip0, skip1, func(at, start, rn, cn int) {
		var sum float32
		if rn > 0 && cn > 0 {
			win := x[start:]
			for i := range rn {
				row := win[i*dh : i*dh+(cn-1)*dw+1]
				for j := 0; j < len(row); j += dw {
					sum += row[j]
				}
			}
		}
		if n := divisor(at/OW, at%OW); n > 0 {
			y[at] = sum / float32(n)
		}
	})
}

// lpExponent returns the Lp-pooling exponent: the float attribute of LpPool-1
// and GlobalLpPool-1, the int one after.
func lpExponent(c *Call) (float64, error) {
	p := 2.0
	if a := c.Node.Attr("p"); a != nil {
		switch a.Type {
		case graph.AttrInt:
			p = float64(a.I)
		case graph.AttrFloat:
			p = float64(a.F)
		}
	}
	if p <= 0 || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0, c.Errorf("p = %v must be positive", p)
	}
	return p, nil
}

// lpTerm is |v|^p.
func lpTerm(v float32, p float64) float64 {
	switch p {
	case 1:
		return math.Abs(float64(v))
	case 2:
		return float64(v) * float64(v)
	}
	return math.Pow(math.Abs(float64(v)), p)
}

// lpRoot is sum^(1/p).
func lpRoot(sum, p float64) float32 {
	switch p {
	case 1:
		return float32(sum)
	case 2:
		return float32(math.Sqrt(sum))
	}
	return float32(math.Pow(sum, 1/p))
}

// lpPoolKernel is ONNX LpPool: (Σ|x|^p)^(1/p) over the in-input taps of
// each window.
func lpPoolKernel(c *Call) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	exp, err := lpExponent(c)
	if err != nil {
		return err
	}
	p, err := Memo(c, c.ShapeKey(), func() (*poolLayout, error) { return poolPlan(c, x.DType, x.Shape) })
	if err != nil {
		return err
	}
	y := c.Output(0, x.DType, p.outShape(x.Shape))
	out := f32Target(y)
	xv := f32Data(x)
	st := p.dil[p.rank-1]
	p.forPlanes(c.Threads, func(i int) {
		xp, yp := xv[i*p.inSize:(i+1)*p.inSize], out[i*p.outSize:(i+1)*p.outSize]
		k := make([]int, p.rank)
		p.windows(func(pos, first int, o []int) {
			var sum float64
			if first >= 0 {
				p.runs(o, k, func(off, n int) {
					run := xp[first+off:]
					for t := range n {
						sum += lpTerm(run[t*st], exp)
					}
				})
			}
			yp[pos] = lpRoot(sum, exp)
		})
	})
	f32Commit(y, out)
	return nil
}

// globalPool checks the input of a global pooling node, allocates its
// output [N, C, 1, ...] and runs f over each plane's values and output
// element.
func globalPool(c *Call, f func(plane []float32) float32) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	if x.Rank() < 2 {
		return c.Errorf("X%v must have rank ≥ 2", x.Shape)
	}
	shape := append([]int64{}, x.Shape...)
	for i := 2; i < len(shape); i++ {
		shape[i] = 1
	}
	y := c.Output(0, x.DType, shape)
	out := f32Target(y)
	xv := f32Data(x)
	size := int(graph.NumElements(x.Shape[2:]))
	c.Threads.For(len(out), max(1, 16384/max(size, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = f(xv[i*size : (i+1)*size])
		}
	})
	f32Commit(y, out)
	return nil
}

// globalMaxPoolKernel is ONNX GlobalMaxPool (NaNs are skipped, as in
// MaxPool).
func globalMaxPoolKernel(c *Call) error {
	return globalPool(c, func(v []float32) float32 {
		best := float32(math.Inf(-1))
		for i, x := range v {
			if i == 0 || x > best || best != best {
				best = x
			}
		}
		return best
	})
}

// globalAveragePoolKernel is ONNX GlobalAveragePool.
func globalAveragePoolKernel(c *Call) error {
	return globalPool(c, func(v []float32) float32 { return float32(sumF64(v) / float64(len(v))) })
}

// sumF64Go is the portable sumF64.
func sumF64Go(x []float32) float64 {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	return sum
}

// globalLpPoolKernel is ONNX GlobalLpPool.
func globalLpPoolKernel(c *Call) error {
	exp, err := lpExponent(c)
	if err != nil {
		return err
	}
	return globalPool(c, func(v []float32) float32 {
		var sum float64
		for _, x := range v {
			sum += lpTerm(x, exp)
		}
		return lpRoot(sum, exp)
	})
}

// poolCeil returns the ceil_mode of a MaxPool, AveragePool or LpPool.
func poolCeil(c *Call) bool {
	switch c.Node.OpType {
	case "MaxPool":
		return ops.Params[ops.MaxPoolParams](c.Node, c.Opset).CeilMode != 0
	case "AveragePool":
		return ops.Params[ops.AveragePoolParams](c.Node, c.Opset).CeilMode != 0
	}
	return ops.Params[ops.LpPoolParams](c.Node, c.Opset).CeilMode != 0
}
