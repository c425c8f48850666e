package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("DeformConv", deformConvKernel)
}

// deformConvKernel is DeformConv over two spatial axes: each kernel tap
// of each output position reads the input at its regular place moved by
// the learned offsets [N, offset_group·2·kH·kW, oH, oW] (Δh then Δw per
// tap), bilinearly interpolated with zeros outside, times the optional
// mask [N, offset_group·kH·kW, oH, oW]. The sampled columns are multiplied
// by the weights with sgemm, in float32, and the bias added.
func deformConvKernel(c *Call) error {
	xt, x, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	wt, w, err := floatInput(c, 1)
	if err != nil {
		return err
	}
	ot, off, err := floatInput(c, 2)
	if err != nil {
		return err
	}
	if xt.Rank() != 4 {
		return c.Unsupported("input of rank %d (only 2-D images)", xt.Rank())
	}
	l, err := convPlan(c, xt.Shape, wt.Shape)
	if err != nil {
		return err
	}
	og := int(ops.Params[ops.DeformConvParams](c.Node, c.Opset).OffsetGroup)
	kh, kw := l.kernel[0], l.kernel[1]
	oh, ow := l.out[0], l.out[1]
	h, wd := l.in[0], l.in[1]
	taps, plane := kh*kw, oh*ow
	if og < 1 || l.cin%og != 0 || !deformDims(ot.Shape, l.n, og*2*taps, oh, ow) {
		return c.Errorf("offset %v for offset_group %d, %d taps and output %dx%d", ot.Shape, og, taps, oh, ow)
	}
	_, bias, err := optFloatInput(c, 3)
	if err != nil {
		return err
	}
	if bias != nil && len(bias) != l.m {
		return c.Errorf("%d biases for %d output channels", len(bias), l.m)
	}
	mt, mask, err := optFloatInput(c, 4)
	if err != nil {
		return err
	}
	if mt != nil && !deformDims(mt.Shape, l.n, og*taps, oh, ow) {
		return c.Errorf("mask %v for offset_group %d and %d taps", mt.Shape, og, taps)
	}
	wf := make([]float32, len(w))
	for i, v := range w {
		wf[i] = float32(v)
	}
	out := make([]float64, l.n*l.m*plane)
	col := make([]float32, l.cin*taps*plane)
	res := make([]float32, l.m*plane)
	perOG := l.cin / og
	for n := range l.n {
		c.Threads.For(l.cin, 1, func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				g := ch / perOG
				img := x[(n*l.cin+ch)*h*wd : (n*l.cin+ch+1)*h*wd]
				for t := range taps {
					i, j := t/kw, t%kw
					dh := off[((n*og+g)*2*taps+2*t)*plane:]
					dw := off[((n*og+g)*2*taps+2*t+1)*plane:]
					dst := col[(ch*taps+t)*plane : (ch*taps+t+1)*plane]
					for p := range plane {
						py, px := p/ow, p%ow
						y := float64(py*l.stride[0]-l.padBegin[0]+i*l.dil[0]) + dh[p]
						xx := float64(px*l.stride[1]-l.padBegin[1]+j*l.dil[1]) + dw[p]
						v := deformSample(img, h, wd, y, xx)
						if mask != nil {
							v *= mask[((n*og+g)*taps+t)*plane+p]
						}
						dst[p] = float32(v)
					}
				}
			}
		})
		k := l.cg * taps
		for g := range l.group {
			sgemm(c.Threads, false, false, l.mg, plane, k, 1, wf[g*l.mg*k:], k, col[g*k*plane:], plane, 0, res[g*l.mg*plane:], plane)
		}
		for m := range l.m {
			b := 0.0
			if bias != nil {
				b = bias[m]
			}
			dst := out[(n*l.m+m)*plane:]
			for p := range plane {
				dst[p] = float64(res[m*plane+p]) + b
			}
		}
	}
	return floatOutput(c, 0, xt.DType, []int64{int64(l.n), int64(l.m), int64(oh), int64(ow)}, out)
}

// deformDims reports whether shape is exactly dims.
func deformDims(shape []int64, dims ...int) bool {
	if len(shape) != len(dims) {
		return false
	}
	for i, d := range dims {
		if shape[i] != int64(d) {
			return false
		}
	}
	return true
}

// deformSample is the bilinear sample of the h×w image at (y, x): 0 when
// the point is a pixel or more outside, corners outside the image reading
// as 0.
func deformSample(img []float64, h, w int, y, x float64) float64 {
	if y <= -1 || y >= float64(h) || x <= -1 || x >= float64(w) {
		return 0
	}
	y0, x0 := int(math.Floor(y)), int(math.Floor(x))
	ly, lx := y-float64(y0), x-float64(x0)
	at := func(r, c int) float64 {
		if r < 0 || r >= h || c < 0 || c >= w {
			return 0
		}
		return img[r*w+c]
	}
	return (1-ly)*(1-lx)*at(y0, x0) + (1-ly)*lx*at(y0, x0+1) + ly*(1-lx)*at(y0+1, x0) + ly*lx*at(y0+1, x0+1)
}
