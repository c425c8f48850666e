package hostfallback

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// convGeom is the spatial geometry shared by the convolution and pooling
// kernels: for each of rank spatial axes the input and output sizes, the
// kernel size, stride, dilation and the padding before the first element.
type convGeom struct {
	rank                         int
	in, out, kernel, stride, dil []int
	padBegin, padEnd             []int
	inSize, outSize, kernelSize  int
}

// convAttrs reads kernel_shape (defaulting to kernel, which may be nil
// when the attribute is required), strides, dilations and pads for an
// input of the given spatial sizes. Output sizes and auto_pad are left to
// the caller.
func convAttrs(c *Call, in []int, kernel []int64) (*convGeom, error) {
	r := len(in)
	g := &convGeom{rank: r, in: in}
	w := ops.WindowOf(c.Node, c.Opset)
	ks := w.KernelFor(kernel)
	if ks == nil {
		return nil, c.Errorf("kernel_shape is required")
	}
	if len(ks) != r {
		return nil, c.Errorf("kernel_shape %v for %d spatial axes", ks, r)
	}
	var err error
	if g.kernel, err = convInts(c, "kernel_shape", ks, 1); err != nil {
		return nil, err
	}
	if g.stride, err = convInts(c, "strides", w.StridesFor(r), 1); err != nil {
		return nil, err
	}
	if g.dil, err = convInts(c, "dilations", w.DilationsFor(r), 1); err != nil {
		return nil, err
	}
	pads, err := convInts(c, "pads", w.PadsFor(r), 0)
	if err != nil {
		return nil, err
	}
	if len(g.stride) != r || len(g.dil) != r || len(pads) != 2*r {
		return nil, c.Errorf("strides %v, dilations %v or pads %v do not fit %d spatial axes", g.stride, g.dil, pads, r)
	}
	g.padBegin, g.padEnd = pads[:r], pads[r:]
	g.out = make([]int, r)
	g.inSize = convProd(in)
	if _, err := convSize(c, "kernel_shape", ks); err != nil {
		return nil, err
	}
	g.kernelSize = convProd(g.kernel)
	for d := range r {
		if s, ok := graph.MulSize(int64(g.kernel[d]-1), int64(g.dil[d])); !ok || s >= graph.MaxBytes {
			return nil, c.Errorf("kernel_shape %v with dilations %v: the kernel's extent overflows", ks, g.dil)
		}
	}
	return g, nil
}

// convInts converts an ints attribute, every value at least least and at
// most graph.MaxBytes (so that a few of them add up without overflow).
func convInts(c *Call, name string, v []int64, least int64) ([]int, error) {
	out := make([]int, len(v))
	for i, x := range v {
		if x < least || x > graph.MaxBytes {
			return nil, c.Errorf("%s %v: values must be in [%d, %d]", name, v, least, int64(graph.MaxBytes))
		}
		out[i] = int(x)
	}
	return out, nil
}

// convSize is the product of sizes (spatial sizes, a kernel's), or an
// error naming what they are when it exceeds graph.MaxBytes elements.
func convSize(c *Call, what string, sizes []int64) (int, error) {
	n, err := graph.Elements(sizes)
	if err == nil && n > graph.MaxBytes {
		err = graph.ErrTooLarge
	}
	if err != nil {
		return 0, c.Errorf("%s %v: %w", what, sizes, err)
	}
	return int(n), nil
}

func convProd(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// span is the extent of the dilated kernel along axis d.
func (g *convGeom) span(d int) int { return (g.kernel[d]-1)*g.dil[d] + 1 }

// forward sets the output sizes of a convolution or pooling window sweep,
// applying auto_pad (NOTSET, SAME_UPPER, SAME_LOWER or VALID); ceil rounds
// the window count up (pooling's ceil_mode), keeping the last window
// starting inside the input or the begin padding.
func (g *convGeom) forward(c *Call, ceil bool) error {
	autoPad := ops.WindowOf(c.Node, c.Opset).AutoPad
	for d := range g.rank {
		in, s, k := g.in[d], g.stride[d], g.span(d)
		switch autoPad {
		case "NOTSET", "":
		case "VALID":
			g.padBegin[d], g.padEnd[d] = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			out := (in + s - 1) / s
			total := max(0, (out-1)*s+k-in)
			small := total / 2
			if autoPad == "SAME_UPPER" {
				g.padBegin[d], g.padEnd[d] = small, total-small
			} else {
				g.padBegin[d], g.padEnd[d] = total-small, small
			}
		default:
			return c.Errorf("auto_pad %q", autoPad)
		}
		room := in + g.padBegin[d] + g.padEnd[d] - k
		if room < 0 {
			return c.Errorf("kernel extent %d exceeds padded input %d along spatial axis %d", k, room+k, d)
		}
		g.out[d] = room/s + 1
		if ceil && room%s != 0 {
			g.out[d]++
			if (g.out[d]-1)*s >= in+g.padBegin[d] {
				g.out[d]--
			}
		}
	}
	var err error
	g.outSize, err = convSize(c, "output spatial sizes", convShape(nil, g.out))
	return err
}

// lastAxisRange returns the range [lo, hi) within [o0, o1) of the output
// positions o whose input coordinate o·stride + off lies in [0, in).
func lastAxisRange(o0, o1, off, stride, in int) (lo, hi int) {
	lo, hi = o0, o1
	if off < 0 {
		lo = min(max(lo, (-off+stride-1)/stride), o1)
	}
	hi = min(hi, convFloorDiv(in-1-off, stride)+1)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// convLeadBase returns the offset, in row-major planes of the given sizes
// and strides, of position pos·stride + off on every axis but the last,
// and whether that lies inside the plane.
func convLeadBase(pos, stride, off, sizes, strides []int) (int, bool) {
	base := 0
	for d := range len(sizes) - 1 {
		i := pos[d]*stride[d] + off[d]
		if i < 0 || i >= sizes[d] {
			return 0, false
		}
		base += i * strides[d]
	}
	return base, true
}

// convFloorDiv is a/b rounded towards −∞ for b > 0.
func convFloorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// taps returns, for each kernel offset in row-major order, its per-axis
// offsets tap·dilation − padBegin.
func (g *convGeom) taps() [][]int {
	out := make([][]int, g.kernelSize)
	idx := make([]int, g.rank)
	for t := range out {
		off := make([]int, g.rank)
		for d := range g.rank {
			off[d] = idx[d]*g.dil[d] - g.padBegin[d]
		}
		out[t] = off
		for d := g.rank - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < g.kernel[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// convNextIndex advances a row-major multi-index over sizes, wrapping to
// zero after the last position.
func convNextIndex(idx, sizes []int) {
	for d := len(idx) - 1; d >= 0; d-- {
		if idx[d]++; idx[d] < sizes[d] {
			return
		}
		idx[d] = 0
	}
}

// convStrides returns the row-major element strides of the given sizes.
func convStrides(sizes []int) []int {
	out := make([]int, len(sizes))
	s := 1
	for d := len(sizes) - 1; d >= 0; d-- {
		out[d] = s
		s *= sizes[d]
	}
	return out
}

// convShape is sizes as a tensor shape behind the leading dimensions.
func convShape(lead []int64, sizes []int) []int64 {
	out := slices.Clone(lead)
	for _, s := range sizes {
		out = append(out, int64(s))
	}
	return out
}
