package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterChecked("ConvTranspose", convTransposeKernel, onFloats)
}

// convTransposeKernel is ONNX ConvTranspose for float32 (float64, float16
// and bfloat16 are computed in float32): X [N, C, D...] and W [C,
// M/group, k...] give Y [N, M, O...]. Each group's filters are applied as
// colᵢ = Wᵀ·X (one column per input position) and the columns scattered
// into the output (col2im).
func convTransposeKernel(c *Call) error {
	x, w := c.Tensor(0), c.Tensor(1)
	if x == nil || w == nil {
		return c.Errorf("inputs X and W are required")
	}
	if w.DType != x.DType {
		return c.Errorf("X is %s but W is %s", x.DType, w.DType)
	}
	xs, ws := x.Shape, w.Shape
	if len(xs) < 3 || len(ws) != len(xs) {
		return c.Errorf("X%v and W%v must have the same rank ≥ 3", xs, ws)
	}
	group := int(ops.ConvGroupOf(c.Node, c.Opset).Group)
	l := &convLayout{n: int(xs[0]), cin: int(xs[1]), mg: int(ws[1]), group: group}
	if group < 1 || l.cin%group != 0 || ws[0] != int64(l.cin) {
		return c.Errorf("X%v, W%v and group %d do not match", xs, ws, group)
	}
	l.cg, l.m = l.cin/group, l.mg*group
	r := len(xs) - 2
	in := make([]int, r)
	for i := range in {
		in[i] = int(xs[i+2])
	}
	g, err := convAttrs(c, in, ws[2:])
	if err != nil {
		return err
	}
	for d, k := range g.kernel {
		if int64(k) != ws[d+2] {
			return c.Errorf("kernel_shape %v does not match W%v", g.kernel, ws)
		}
	}
	l.convGeom = g
	if err := l.transposedOutput(c); err != nil {
		return err
	}
	bias := c.Tensor(2)
	if bias != nil && (bias.DType != x.DType || bias.Rank() != 1 || bias.Shape[0] != int64(l.m)) {
		return c.Errorf("B %s%v must be %s[%d]", bias.DType, bias.Shape, x.DType, l.m)
	}
	shape := convShape([]int64{int64(l.n), int64(l.m)}, l.out)
	if err := c.Check(x.DType, shape); err != nil {
		return err
	}
	y := c.Output(0, x.DType, shape)
	out := f32Target(y)
	if bias != nil {
		convFillBias(out, f32Data(bias), l.n, l.outSize)
	}
	if l.n > 0 && l.mg > 0 && l.cg > 0 && l.inSize > 0 && l.outSize > 0 {
		l.transposed(c.Threads, f32Data(x), f32Data(w), out)
	}
	f32Commit(y, out)
	return nil
}

// transposedOutput sets the output sizes and begin paddings of a
// ConvTranspose from pads, output_padding, output_shape and auto_pad.
func (l *convLayout) transposedOutput(c *Call) error {
	r := l.rank
	p := ops.Params[ops.ConvTransposeParams](c.Node, c.Opset)
	outPad, err := convInts(c, "output_padding", p.OutputPaddingFor(r), 0)
	if err != nil {
		return err
	}
	if len(outPad) != r {
		return c.Errorf("output_padding %v for %d spatial axes", outPad, r)
	}
	if err := ops.OutputPaddingFits(outPad, l.stride, l.dil); err != nil {
		return c.Errorf("%w", err)
	}
	shape := p.OutputShape
	if len(shape) == r+2 {
		shape = shape[2:]
	}
	if shape != nil && len(shape) != r {
		return c.Errorf("output_shape %v for %d spatial axes", shape, r)
	}
	if shape != nil {
		if _, err := convInts(c, "output_shape", shape, 0); err != nil {
			return err
		}
	}
	autoPad := p.AutoPad
	switch autoPad {
	case "NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return c.Errorf("auto_pad %q", autoPad)
	}
	for d := range r {
		full := outPad[d] + l.span(d) - l.stride[d]
		if l.in[d] > 0 {
			base, ok := graph.MulSize(int64(l.stride[d]), int64(l.in[d]-1))
			if !ok || base > graph.MaxBytes {
				return c.Errorf("strides %v: the output along spatial axis %d (input %d) is too large", l.stride, d, l.in[d])
			}
			full = int(base) + outPad[d] + l.span(d)
		}
		switch {
		case shape != nil || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			out := l.in[d] * l.stride[d]
			if shape != nil {
				out = int(shape[d])
			}
			total := full - out
			half := convFloorDiv(total, 2)
			if autoPad == "SAME_UPPER" {
				l.padBegin[d], l.padEnd[d] = half, total-half
			} else {
				l.padBegin[d], l.padEnd[d] = total-half, half
			}
		case autoPad == "VALID":
			l.padBegin[d], l.padEnd[d] = 0, 0
		}
		l.out[d] = full - l.padBegin[d] - l.padEnd[d]
		if l.out[d] < 0 {
			return c.Errorf("pads %v leave a negative output along spatial axis %d", append(l.padBegin, l.padEnd...), d)
		}
	}
	l.outSize, err = convSize(c, "output spatial sizes", convShape(nil, l.out))
	return err
}

// transposed adds the transposed convolution of x by w into y.
func (l *convLayout) transposed(threads *Threads, x, w, y []float32) {
	rows := l.mg * l.kernelSize
	S := l.inSize
	tile := min(S, max(convIm2colBudget/rows, 16))
	taps := l.taps()
	convUnits(threads, l.n*l.group, func(u int, serial bool) {
		n, grp := u/l.group, u%l.group
		xg := x[(n*l.cin+grp*l.cg)*S:]
		wg := w[grp*l.cg*rows:]
		yg := y[(n*l.m+grp*l.mg)*l.outSize:]
		col := make([]float32, rows*tile)
		for s0 := 0; s0 < S; s0 += tile {
			s1 := min(s0+tile, S)
			width := s1 - s0
			if serial {
				sgemmSerial(true, false, rows, width, l.cg, 1, wg, rows, xg[s0:], S, 0, col, width)
				convCol2im(l.convGeom, taps, col, 0, l.mg, s0, s1, yg)
				continue
			}
			sgemm(threads, true, false, rows, width, l.cg, 1, wg, rows, xg[s0:], S, 0, col, width)
			threads.For(l.mg, 1, func(lo, hi int) { convCol2im(l.convGeom, taps, col, lo, hi, s0, s1, yg) })
		}
	})
}

// convCol2im adds col, a (mg·kernel)×(s1−s0) matrix with a row per (output
// channel, kernel tap) and a column per input position in [s0, s1), into
// the output planes y of channels [mo0, mo1): the value for input
// position i and tap t lands at output position i·stride + t·dilation −
// padBegin when that lies inside the output.
func convCol2im(g *convGeom, taps [][]int, col []float32, mo0, mo1, s0, s1 int, y []float32) {
	r := g.rank
	last := r - 1
	width := s1 - s0
	inStrides, outStrides := convStrides(g.in), convStrides(g.out)
	ic := make([]int, r)
	st := g.stride[last]
	for s := s0; s < s1; {
		rem := s
		for d := range r {
			ic[d] = rem / inStrides[d]
			rem %= inStrides[d]
		}
		i0 := ic[last]
		i1 := min(g.in[last], i0+s1-s)
		seg := s - s0
		for t, off := range taps {
			base, inside := convLeadBase(ic, g.stride, off, g.out, outStrides)
			if !inside {
				continue
			}
			of := off[last]
			lo, hi := lastAxisRange(i0, i1, of, st, g.out[last])
			for mo := mo0; mo < mo1; mo++ {
				row := (mo*len(taps)+t)*width + seg - i0
				src := col[row+lo : row+hi]
				dst := y[mo*g.outSize+base:]
				if st == 1 {
					dst = dst[lo+of : hi+of]
					for i, v := range src {
						dst[i] += v
					}
					continue
				}
				for i, v := range src {
					dst[(lo+i)*st+of] += v
				}
			}
		}
		s += i1 - i0
	}
}
