package hostfallback

import (
	"sync"
	"sync/atomic"

	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterChecked("Conv", convKernel, onFloats)
}

// convIm2colBudget bounds the im2col buffer of one tile, in elements.
const convIm2colBudget = 1 << 18

// convLayout is a checked convolution: batch n, cin input and m output
// channels in group groups of cg and mg channels, and the spatial geometry.
type convLayout struct {
	*convGeom
	n, cin, m, group, cg, mg int
	// shiftA is the constant filters packed for shiftF32, once, and
	// shiftOffs its taps' offsets in the phase planes.
	shiftOnce, shiftGeom sync.Once
	shiftA               []float32
	shiftOffs            []int
	// normA and normB are a NormConv's constant normalization
	// coefficients (see convNorm), made once.
	normOnce     sync.Once
	normA, normB []float32
}

// convPlan checks the shapes of X [N, C, D...] and W [M, C/group, k...] and
// the attributes of a Conv-like node, and sizes its output.
func convPlan(c *Call, xs, ws []int64) (*convLayout, error) {
	if len(xs) < 3 || len(ws) != len(xs) {
		return nil, c.Errorf("X%v and W%v must have the same rank ≥ 3", xs, ws)
	}
	group := int(ops.ConvGroupOf(c.Node, c.Opset).Group)
	l := &convLayout{n: int(xs[0]), cin: int(xs[1]), m: int(ws[0]), group: group}
	if group < 1 || l.cin%group != 0 || l.m%group != 0 || ws[1] != int64(l.cin/group) {
		return nil, c.Errorf("X%v, W%v and group %d do not match", xs, ws, group)
	}
	l.cg, l.mg = l.cin/group, l.m/group
	in := make([]int, len(xs)-2)
	for i := range in {
		in[i] = int(xs[i+2])
	}
	g, err := convAttrs(c, in, ws[2:])
	if err != nil {
		return nil, err
	}
	for d, k := range g.kernel {
		if int64(k) != ws[d+2] {
			return nil, c.Errorf("kernel_shape %v does not match W%v", g.kernel, ws)
		}
	}
	l.convGeom = g
	return l, g.forward(c, false)
}

// convPlanMemo is convPlan, made once for the shapes of the call's inputs
// (see Memo).
func convPlanMemo(c *Call, xs, ws []int64) (*convLayout, error) {
	return Memo(c, c.ShapeKey(), func() (*convLayout, error) { return convPlan(c, xs, ws) })
}

// convKernel is ONNX Conv for float32 (float64, float16 and bfloat16 are
// computed in float32).
func convKernel(c *Call) error { return convWith(c, nil, nil) }

// convWith is Conv followed by the activation act (nil: none), applied to
// each block of output while it is in cache, of X normalized by norm
// (nil: X itself; see convNorm), which only a pointwise convolution takes.
func convWith(c *Call, act *convAct, norm *convNorm) error {
	x, w := c.Tensor(0), c.Tensor(1)
	if x == nil || w == nil {
		return c.Errorf("inputs X and W are required")
	}
	if w.DType != x.DType {
		return c.Errorf("X is %s but W is %s", x.DType, w.DType)
	}
	l, err := convPlanMemo(c, x.Shape, w.Shape)
	if err != nil {
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
	y := c.OutputUninit(0, x.DType, shape)
	out := f32Target(y)
	var b []float32
	if bias != nil {
		b = f32Data(bias)
	} else {
		buf := gemmBuf(l.m)
		defer gemmBufs.Put(buf)
		b = *buf
		clear(b)
	}
	if norm != nil {
		if !l.pointwise() {
			return c.Errorf("the normalized input needs a 1×…×1 convolution with unit strides and no padding")
		}
		if err := norm.coefficients(c, l); err != nil {
			return err
		}
	}
	l.runF32(c.Threads, f32Data(x), f32Data(w), b, out, act, norm, c.Const(1))
	f32Commit(y, out)
	return nil
}

// convFillBias sets every output plane of y ([n, len(b), size]) to its
// channel's bias.
func convFillBias(y, b []float32, n, size int) {
	for i := range n * len(b) {
		plane := y[i*size : (i+1)*size]
		v := b[i%len(b)]
		for j := range plane {
			plane[j] = v
		}
	}
}

// pointwise reports whether the convolution is a plain matrix product: a
// 1×…×1 kernel with unit strides and no padding.
func (l *convLayout) pointwise() bool {
	for d := range l.rank {
		if l.kernel[d] != 1 || l.stride[d] != 1 || l.padBegin[d] != 0 || l.padEnd[d] != 0 {
			return false
		}
	}
	return true
}

// runF32 sets y to the convolution of x by w plus the bias b (one value
// per output channel), the bias added in the GEMM's store, then applies
// act (nil: none) to each block of y just written: as the GEMM's
// epilogue (convAct.epilogue) where a GEMM computes it, on the goroutine
// that computed the block; the depthwise and shifted kernels on each run
// of output they write. It writes every element of y. With norm (nil: none), which only a
// pointwise convolution takes, x is normalized a tile at a time as it is
// read (see pointwiseF32 and convPackedF32).
func (l *convLayout) runF32(threads *Threads, x, w, b, y []float32, act *convAct, norm *convNorm, constW bool) {
	switch {
	case l.n == 0 || l.m == 0 || l.outSize == 0:
	case l.cg*l.kernelSize == 0:
		convFillBias(y, b, l.n, l.outSize)
		act.apply(y, 0, 1, len(y), len(y))
	case norm != nil && l.pointwisePacked(threads):
		convPackedF32(threads, l, x, w, b, y, act, norm)
	case norm != nil:
		l.pointwiseF32(threads, x, w, b, y, act, norm)
	case l.cg == 1 && l.rank == 2 && l.dwFits():
		l.depthwise2D(threads, x, w, b, y, act)
	case l.pointwise() && !l.pointwisePacked(threads):
		l.pointwiseF32(threads, x, w, b, y, act, nil)
	case l.shiftable():
		l.shiftF32(threads, x, w, b, y, act, constW)
	case convPackedUsable():
		convPackedF32(threads, l, x, w, b, y, act, nil)
	default:
		convGeneral(threads, l, x, w, y, func(row0, m, n, k int, a []float32, lda int, col []float32, ldb int, c []float32, at, ldc int, serial bool) {
			sgemmBias(threads, serial, m, n, k, a, lda, col, ldb, b[row0:], c[at:], ldc, act.epilogue(at))
		}, false)
	}
}

// convUnits runs f over independent work units: spread over goroutines
// (f's serial flag set) when there are enough of them to balance, else one
// after the other with f free to go parallel inside.
func convUnits(threads *Threads, units int, f func(u int, serial bool)) {
	workers := threads.Workers()
	if workers > 1 && (units >= 4*workers || (units >= workers && units%workers == 0)) {
		var next atomic.Int64
		threads.For(workers, 1, func(_, _ int) {
			for u := int(next.Add(1) - 1); u < units; u = int(next.Add(1) - 1) {
				f(u, true)
			}
		})
		return
	}
	for u := range units {
		f(u, false)
	}
}

// convMatMul stores into c, from c[at] with row stride ldc, the product
// of an m×k and a k×n matrix, the filters of output channels [row0,
// row0+m), plus their bias where the type has one; serial asks it not to
// spawn goroutines.
type convMatMul[T float32 | int32] func(row0, m, n, k int, a []T, lda int, b []T, ldb int, c []T, at, ldc int, serial bool)

// convGeneral is the im2col convolution: for each image and group, tiles
// of output positions are expanded into a (cg·kernel)×tile patch matrix
// and multiplied by the group's filters. alwaysSerial asks for units on
// goroutines even when there are few (for a mm that is serial anyway).
func convGeneral[T float32 | int32](threads *Threads, l *convLayout, x, w, y []T, mm convMatMul[T], alwaysSerial bool) {
	S := l.outSize
	rows := l.cg * l.kernelSize
	if rows == 0 {
		return
	}
	workers := threads.Workers()
	tile := min(S, max(convIm2colBudget/rows, 16))
	tiles := (S + tile - 1) / tile
	if images := l.n * l.group; images < workers && S >= 64*workers {
		// Few images: split the positions so that every worker gets
		// whole tiles of the same size.
		per := (workers + images - 1) / images
		tiles = (tiles + per - 1) / per * per
	}
	tile = (S + tiles - 1) / tiles
	tiles = (S + tile - 1) / tile
	taps := l.taps()
	units := l.n * l.group * tiles
	run := func(u int, serial bool, col []T) {
		ng, t := u/tiles, u%tiles
		n, grp := ng/l.group, ng%l.group
		s0 := t * tile
		s1 := min(s0+tile, S)
		convIm2col(l.convGeom, taps, x[(n*l.cin+grp*l.cg)*l.inSize:], l.cg, s0, s1, col)
		mm(grp*l.mg, l.mg, s1-s0, rows, w[grp*l.mg*rows:], rows, col, s1-s0, y, (n*l.m+grp*l.mg)*S+s0, S, serial)
	}
	if workers > 1 && (alwaysSerial || units >= 4*workers || units%workers == 0) {
		threads.For(units, 1, func(lo, hi int) {
			col, release := convScratch[T](rows * tile)
			defer release()
			for u := lo; u < hi; u++ {
				run(u, true, col)
			}
		})
		return
	}
	col, release := convScratch[T](rows * tile)
	defer release()
	for u := range units {
		run(u, false, col)
	}
}

// convScratch returns n Ts of scratch space (of any content), pooled for
// float32, and the function that gives it back.
func convScratch[T float32 | int32](n int) ([]T, func()) {
	var zero T
	if _, ok := any(zero).(float32); ok {
		p := gemmBuf(n)
		return any(*p).([]T), func() { gemmBufs.Put(p) }
	}
	return make([]T, n), func() {}
}

// convIm2col fills col, a rows×(s1−s0) row-major matrix with a row per
// (channel, kernel tap), with the input values under each tap for the
// output positions [s0, s1); x holds cg input planes. Taps in the padding
// read as zero.
func convIm2col[T float32 | int32](g *convGeom, taps [][]int, x []T, cg, s0, s1 int, col []T) {
	r := g.rank
	last := r - 1
	width := s1 - s0
	outStrides, inStrides := convStrides(g.out), convStrides(g.in)
	oc := make([]int, r)
	st := g.stride[last]
	for s := s0; s < s1; {
		rem := s
		for d := range r {
			oc[d] = rem / outStrides[d]
			rem %= outStrides[d]
		}
		o0 := oc[last]
		o1 := min(g.out[last], o0+s1-s)
		seg := s - s0
		for t, off := range taps {
			base, inside := convLeadBase(oc, g.stride, off, g.in, inStrides)
			of := off[last]
			lo, hi := lastAxisRange(o0, o1, of, st, g.in[last])
			for ch := range cg {
				row := (ch*len(taps) + t) * width
				dst := col[row+seg : row+seg+o1-o0]
				if !inside || hi == lo {
					clear(dst)
					continue
				}
				clear(dst[:lo-o0])
				clear(dst[hi-o0:])
				src := x[ch*g.inSize+base:]
				if st == 1 {
					copy(dst[lo-o0:hi-o0], src[lo+of:hi+of])
					continue
				}
				for o := lo; o < hi; o++ {
					dst[o-o0] = src[o*st+of]
				}
			}
		}
		s += o1 - o0
	}
}
