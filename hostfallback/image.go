package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Image sampling and rearrangement: GridSample, AffineGrid, Col2Im and
// CenterCropPad. GridSample and AffineGrid follow the ONNX reference
// implementation, in float64, over any number of spatial axes.

func init() {
	Register("GridSample", gridSampleKernel)
	Register("AffineGrid", affineGridKernel)
	Register("Col2Im", col2ImKernel)
	Register("CenterCropPad", centerCropPadKernel)
}

// The sampling modes of GridSample.
const (
	gsNearest = iota
	gsLinear
	gsCubic
)

// The padding modes of GridSample.
const (
	gsZeros = iota
	gsBorder
	gsReflection
)

// gsTap is one input index along an axis and its interpolation weight.
type gsTap struct {
	i int
	w float64
}

// gridSampleKernel is GridSample: output [N, C, O...] samples input
// [N, C, D...] at the normalized coordinates grid [N, O..., r], whose last
// axis lists them innermost spatial axis first.
func gridSampleKernel(c *Call) error {
	xt, x, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	gt, grid, err := floatInput(c, 1)
	if err != nil {
		return err
	}
	r := xt.Rank() - 2
	if r < 1 || gt.Rank() != r+2 || gt.Shape[0] != xt.Shape[0] || gt.Shape[r+1] != int64(r) {
		return c.Errorf("input %v and grid %v, want [N, C, D...] and [N, O..., %d]", xt.Shape, gt.Shape, max(r, 0))
	}
	mode, padding, err := gridSampleModes(c)
	if err != nil {
		return err
	}
	align := ops.Params[ops.GridSampleParams](c.Node, c.Opset).AlignCorners != 0
	dims := make([]int, r)
	for i := range dims {
		dims[i] = int(xt.Shape[2+i])
	}
	n, ch := int(xt.Shape[0]), int(xt.Shape[1])
	plane := int(graph.NumElements(xt.Shape[2:]))
	points := int(graph.NumElements(gt.Shape[1 : r+1]))
	if plane == 0 && points > 0 && xt.Shape[1] > 0 {
		return c.Errorf("sampling an empty input %v", xt.Shape)
	}
	out := make([]float64, n*ch*points)
	taps := make([][]gsTap, r)
	idx := make([]int, r)
	for b := range n {
		for p := range points {
			g := grid[(b*points+p)*r : (b*points+p+1)*r]
			for a := range r {
				dim := dims[a]
				v := gsDenormalize(g[r-1-a], dim, align)
				if mode == gsNearest {
					v = math.RoundToEven(v)
				}
				lo, hi := -0.5, float64(dim)-0.5
				if align {
					lo, hi = 0, float64(dim-1)
				}
				if v < lo || v > hi {
					switch padding {
					case gsBorder:
						v = min(max(v, 0), float64(dim-1))
					case gsReflection:
						v = gsReflect(v, lo, hi)
					}
				}
				taps[a] = gsTaps(taps[a][:0], v, mode)
			}
			for k := range ch {
				img := x[(b*ch+k)*plane : (b*ch+k+1)*plane]
				out[(b*ch+k)*points+p] = gsGather(img, dims, taps, idx, padding, align)
			}
		}
	}
	shape := append([]int64{xt.Shape[0], xt.Shape[1]}, gt.Shape[1:r+1]...)
	return floatOutput(c, 0, xt.DType, shape, out)
}

// gridSampleModes reads the mode and padding_mode attributes, accepting
// the names of opset 16 (bilinear, bicubic) and of opset 20 (linear,
// cubic).
func gridSampleModes(c *Call) (mode, padding int, err error) {
	p := ops.Params[ops.GridSampleParams](c.Node, c.Opset)
	switch m := p.Mode; m {
	case "nearest":
		mode = gsNearest
	case "bilinear", "linear":
		mode = gsLinear
	case "bicubic", "cubic":
		mode = gsCubic
	default:
		return 0, 0, c.Errorf("mode %q", m)
	}
	switch p := p.PaddingMode; p {
	case "zeros":
		padding = gsZeros
	case "border":
		padding = gsBorder
	case "reflection":
		padding = gsReflection
	default:
		return 0, 0, c.Errorf("padding_mode %q", p)
	}
	return mode, padding, nil
}

// gsDenormalize maps a normalized coordinate in [-1, 1] to a pixel
// coordinate along an axis of size dim.
func gsDenormalize(v float64, dim int, align bool) float64 {
	if align {
		return (v + 1) / 2 * float64(dim-1)
	}
	return ((v+1)*float64(dim) - 1) / 2
}

// gsReflect reflects v into [lo, hi] as often as needed.
func gsReflect(v, lo, hi float64) float64 {
	span := hi - lo
	if span <= 0 {
		return lo
	}
	switch {
	case v < lo:
		d := lo - v
		k := math.Floor(d / span)
		rem := d - k*span
		if math.Mod(k, 2) == 0 {
			return lo + rem
		}
		return hi - rem
	case v > hi:
		d := v - hi
		k := math.Floor(d / span)
		rem := d - k*span
		if math.Mod(k, 2) == 0 {
			return hi - rem
		}
		return lo + rem
	}
	return v
}

// gsTaps appends the indices and weights that interpolate at coordinate v.
func gsTaps(t []gsTap, v float64, mode int) []gsTap {
	switch mode {
	case gsNearest:
		return append(t, gsTap{int(v), 1})
	case gsLinear:
		f := math.Floor(v)
		d := v - f
		return append(t, gsTap{int(f), 1 - d}, gsTap{int(f) + 1, d})
	}
	f := math.Floor(v)
	s := v - f
	const a = -0.75
	w0 := ((a*(s+1)-5*a)*(s+1)+8*a)*(s+1) - 4*a
	w1 := ((a+2)*s-(a+3))*s*s + 1
	w2 := ((a+2)*(1-s)-(a+3))*(1-s)*(1-s) + 1
	i := int(f)
	return append(t, gsTap{i - 1, w0}, gsTap{i, w1}, gsTap{i + 1, w2}, gsTap{i + 2, 1 - w0 - w1 - w2})
}

// gsGather sums the image's pixels over the product of the per-axis taps,
// reading pixels outside the image as the padding mode says.
func gsGather(img []float64, dims []int, taps [][]gsTap, idx []int, padding int, align bool) float64 {
	r := len(dims)
	clear(idx)
	sum := 0.0
	for {
		off, w := 0, 1.0
		inside := true
		for a := range r {
			t := taps[a][idx[a]]
			w *= t.w
			i, ok := gsPixel(t.i, dims[a], padding, align)
			inside = inside && ok
			off = off*dims[a] + i
		}
		if inside && w != 0 {
			sum += w * img[off]
		}
		a := r - 1
		for ; a >= 0; a-- {
			idx[a]++
			if idx[a] < len(taps[a]) {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return sum
		}
	}
}

// gsPixel maps index i along an axis of size dim to the pixel it reads;
// ok is false when it reads zero padding.
func gsPixel(i, dim int, padding int, align bool) (int, bool) {
	if i >= 0 && i < dim {
		return i, true
	}
	switch padding {
	case gsBorder:
		return min(max(i, 0), dim-1), true
	case gsReflection:
		lo, hi := -0.5, float64(dim)-0.5
		if align {
			lo, hi = 0, float64(dim-1)
		}
		j := int(gsReflect(float64(i), lo, hi))
		return min(max(j, 0), dim-1), true
	}
	return 0, false
}

// affineGridKernel is AffineGrid: the sampling grid [N, H, W, 2] (or
// [N, D, H, W, 3]) that the affine matrices theta [N, 2, 3] (or [N, 3, 4])
// give for an output of size [N, C, H, W] (or [N, C, D, H, W]).
func affineGridKernel(c *Call) error {
	tt, theta, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	size, ok, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	if !ok || (len(size) != 4 && len(size) != 5) {
		return c.Errorf("size %v, want [N, C, H, W] or [N, C, D, H, W]", size)
	}
	r := len(size) - 2
	if tt.Rank() != 3 || tt.Shape[0] != size[0] || tt.Shape[1] != int64(r) || tt.Shape[2] != int64(r+1) {
		return c.Errorf("theta %v for size %v", tt.Shape, size)
	}
	align := ops.Params[ops.AffineGridParams](c.Node, c.Opset).AlignCorners != 0
	spatial := size[2:]
	for _, d := range spatial {
		if d < 0 {
			return c.Errorf("negative size %v", size)
		}
	}
	points := int(graph.NumElements(spatial))
	n := int(size[0])
	out := make([]float64, n*points*r)
	coord := make([]float64, r+1)
	for p := range points {
		// coord lists x, y (, z) then 1: innermost axis first.
		rem := p
		for a := r - 1; a >= 0; a-- {
			d := int(spatial[a])
			coord[r-1-a] = affineBase(rem%d, d, align)
			rem /= d
		}
		coord[r] = 1
		for b := range n {
			th := theta[b*r*(r+1):]
			dst := out[(b*points+p)*r:]
			for i := range r {
				s := 0.0
				for j := range r + 1 {
					s += th[i*(r+1)+j] * coord[j]
				}
				dst[i] = s
			}
		}
	}
	shape := append(append([]int64{size[0]}, spatial...), int64(r))
	return floatOutput(c, 0, tt.DType, shape, out)
}

// affineBase is the normalized coordinate of pixel i of d along an axis.
func affineBase(i, d int, align bool) float64 {
	if align {
		if d == 1 {
			return -1
		}
		return -1 + 2*float64(i)/float64(d-1)
	}
	return (2*float64(i)+1)/float64(d) - 1
}

// col2ImKernel is Col2Im: input [N, C·∏block, L] holds the columns of
// sliding blocks; each is added back into the image [N, C, image_shape...]
// it was taken from, overlapping blocks summing.
func col2ImKernel(c *Call) error {
	xt, x, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	img, ok1, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	blk, ok2, err := intsInput(c, 2)
	if err != nil {
		return err
	}
	r := len(img)
	if !ok1 || !ok2 || r == 0 || len(blk) != r || xt.Rank() != 3 {
		return c.Errorf("input %v, image shape %v and block shape %v do not fit", xt.Shape, img, blk)
	}
	p := ops.Params[ops.Col2ImParams](c.Node, c.Opset)
	w := ops.Window{Dilations: p.Dilations, Pads: p.Pads, Strides: p.Strides}
	dil, strides, pads := w.DilationsFor(r), w.StridesFor(r), w.PadsFor(r)
	if len(dil) != r || len(strides) != r || len(pads) != 2*r {
		return c.Errorf("dilations %v, strides %v, pads %v for %d axes", dil, strides, pads, r)
	}
	kprod := graph.NumElements(blk)
	if kprod <= 0 || xt.Shape[1]%kprod != 0 {
		return c.Errorf("input channels %d not a multiple of the block size %d", xt.Shape[1], kprod)
	}
	blocks := make([]int64, r)
	nblocks := int64(1)
	for a := range r {
		if dil[a] < 1 || strides[a] < 1 || blk[a] < 1 || img[a] < 0 {
			return c.Errorf("dilations %v, strides %v, block %v, image %v", dil, strides, blk, img)
		}
		span := dil[a]*(blk[a]-1) + 1
		blocks[a] = (img[a]+pads[a]+pads[a+r]-span)/strides[a] + 1
		nblocks *= max(blocks[a], 0)
	}
	if xt.Shape[2] != nblocks {
		return c.Errorf("%d blocks, the image and block shapes give %d", xt.Shape[2], nblocks)
	}
	batch, ch := int(xt.Shape[0]), int(xt.Shape[1]/kprod)
	plane := int(graph.NumElements(img))
	out := make([]float64, batch*ch*plane)
	kidx, bidx := make([]int64, r), make([]int64, r)
	for b := range batch {
		for k := range ch {
			dst := out[(b*ch+k)*plane : (b*ch+k+1)*plane]
			for ki := range kprod {
				col2imUnravel(kidx, ki, blk)
				src := x[((int64(b)*int64(ch)+int64(k))*kprod+ki)*nblocks:]
				for bi := range nblocks {
					col2imUnravel(bidx, bi, blocks)
					off, inside := int64(0), true
					for a := range r {
						p := bidx[a]*strides[a] - pads[a] + kidx[a]*dil[a]
						inside = inside && p >= 0 && p < img[a]
						off = off*img[a] + p
					}
					if inside {
						dst[off] += src[bi]
					}
				}
			}
		}
	}
	return floatOutput(c, 0, xt.DType, append([]int64{xt.Shape[0], int64(ch)}, img...), out)
}

// col2imUnravel stores the multi-index of flat offset o in shape into idx.
func col2imUnravel(idx []int64, o int64, shape []int64) {
	for a := len(shape) - 1; a >= 0; a-- {
		idx[a] = o % shape[a]
		o /= shape[a]
	}
}

// centerCropPadKernel is CenterCropPad: each listed axis (all by default)
// is cropped or zero-padded about its centre to the requested size; an odd
// difference puts the extra element at the end.
func centerCropPadKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	want, ok, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	if !ok {
		return c.Errorf("shape input missing")
	}
	r := x.Rank()
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := c.Node.Attr("axes"); a != nil {
		if axes, err = resolveAxes(c, a.Ints, r); err != nil {
			return err
		}
	}
	if len(want) != len(axes) {
		return c.Errorf("%d sizes for %d axes", len(want), len(axes))
	}
	shape := append([]int64{}, x.Shape...)
	srcOff, dstOff := make([]int64, r), make([]int64, r)
	for i, a := range axes {
		if want[i] < 0 {
			return c.Errorf("negative size %d", want[i])
		}
		d := x.Shape[a]
		if want[i] < d {
			srcOff[a] = (d - want[i]) / 2
		} else {
			dstOff[a] = (want[i] - d) / 2
		}
		shape[a] = want[i]
	}
	y := c.Output(0, x.DType, shape)
	copyShape := make([]int64, r)
	for a := range r {
		copyShape[a] = min(x.Shape[a], shape[a])
	}
	n := graph.NumElements(copyShape)
	if n == 0 {
		return nil
	}
	if x.DType == graph.String {
		for o := range n {
			y.Strings[cropOffset(o, copyShape, dstOff, shape)] = x.Strings[cropOffset(o, copyShape, srcOff, x.Shape)]
		}
		return nil
	}
	if x.DType.Bits()%8 != 0 {
		return c.Unsupported("type %s", x.DType)
	}
	es := int64(x.DType.Size())
	for o := range n {
		s, d := cropOffset(o, copyShape, srcOff, x.Shape)*es, cropOffset(o, copyShape, dstOff, shape)*es
		copy(y.Data[d:d+es], x.Data[s:s+es])
	}
	return nil
}

// cropOffset is the flat offset in a tensor of shape full of element o of
// a box of shape box placed at off.
func cropOffset(o int64, box, off, full []int64) int64 {
	flat, stride := int64(0), int64(1)
	for a := len(box) - 1; a >= 0; a-- {
		flat += (o%box[a] + off[a]) * stride
		o /= box[a]
		stride *= full[a]
	}
	return flat
}
