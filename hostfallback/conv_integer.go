package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
)

func init() {
	Register("ConvInteger", convIntegerKernel)
}

// convIntegerPlan is a ConvInteger node's plan for one set of shapes.
type convIntegerPlan struct {
	l *convLayout
	// w, when W and its zero point are constant, is W − w_zero_point in
	// qgemm's packed A layout (see convIntegerWeights).
	w []int16
}

// convIntegerKernel is ONNX ConvInteger: the convolution of (X −
// x_zero_point) by (W − w_zero_point) for 8-bit X and W, accumulated in
// int32. x_zero_point is a scalar; w_zero_point a scalar or one value per
// output channel. Padding reads as the zero point, that is as 0 after the
// subtraction. Each tile of output positions is an integer product (qgemm)
// of the packed weights by the tile's im2col columns.
func convIntegerKernel(c *Call) error {
	x, w := c.Tensor(0), c.Tensor(1)
	if x == nil || w == nil {
		return c.Errorf("inputs x and w are required")
	}
	p, err := Memo(c, c.ShapeKey(), func() (*convIntegerPlan, error) {
		l, err := convPlan(c, x.Shape, w.Shape)
		if err != nil {
			return nil, err
		}
		p := &convIntegerPlan{l: l}
		if c.Const(1) && (c.Tensor(3) == nil || c.Const(3)) {
			p.w, err = convIntegerWeights(c, l, w)
		}
		return p, err
	})
	if err != nil {
		return err
	}
	l := p.l
	xv, err := int8Values(c, x)
	if err != nil {
		return err
	}
	if zp := c.Tensor(2); zp != nil {
		z, err := int8Values(c, zp)
		if err != nil {
			return err
		}
		if len(z) != 1 {
			return c.Errorf("x_zero_point%v must be a scalar", zp.Shape)
		}
		if zp.DType != x.DType {
			return c.Errorf("x_zero_point is %s but x is %s", zp.DType, x.DType)
		}
		for i := range xv {
			xv[i] -= z[0]
		}
	}
	wp := p.w
	if wp == nil {
		if wp, err = convIntegerWeights(c, l, w); err != nil {
			return err
		}
	}
	y := c.Output(0, graph.Int32, convShape([]int64{int64(l.n), int64(l.m)}, l.out))
	if l.n == 0 || l.m == 0 || l.outSize == 0 {
		return nil
	}
	convIntegerRun(c.Threads, qgemmBest, l, xv, wp, graph.View[int32](y))
	return nil
}

// convIntegerWeights returns W − w_zero_point as qgemm's A, group by
// group: each group's M/group rows of C/group·kernel values, packed (its
// rows rounded up to a multiple of qgemmMR) one after the other.
func convIntegerWeights(c *Call, l *convLayout, w *graph.Tensor) ([]int16, error) {
	wv, err := int8Values(c, w)
	if err != nil {
		return nil, err
	}
	rows := l.cg * l.kernelSize
	if zp := c.Tensor(3); zp != nil {
		if zp.DType != w.DType {
			return nil, c.Errorf("w_zero_point is %s but w is %s", zp.DType, w.DType)
		}
		z, err := int8Values(c, zp)
		if err != nil {
			return nil, err
		}
		if len(z) != 1 && len(z) != l.m {
			return nil, c.Errorf("w_zero_point%v must be a scalar or hold %d values", zp.Shape, l.m)
		}
		for i := range wv {
			wv[i] -= z[(i/rows)%len(z)]
		}
	}
	per := qgemmSizeA(l.mg, rows)
	out := make([]int16, l.group*per)
	for g := range l.group {
		qpackA(out[g*per:], wv[g*l.mg*rows:], l.mg, rows, rows)
	}
	return out, nil
}

// convIntegerRun sets y to the convolution of x (its zero point
// subtracted) by the packed weights w, a tile of output positions of one
// image and group at a time: the tile's im2col columns, packed as qgemm's
// B, times the group's weights.
func convIntegerRun(threads *Threads, kern *qgemmKernel, l *convLayout, x []int32, w []int16, y []int32) {
	S, rows := l.outSize, l.cg*l.kernelSize
	tile := min(S, max(convIm2colBudget/max(rows, 1), qgemmNR))
	tiles := (S + tile - 1) / tile
	if images, workers := l.n*l.group, threads.Workers(); images*tiles < workers && S >= 64*workers {
		// Few images: split the positions so that every worker has some.
		tiles = (workers + images - 1) / images
	}
	// Whole panels of qgemmNR columns, but for the last tile.
	tile = ((S+tiles-1)/tiles + qgemmNR - 1) / qgemmNR * qgemmNR
	tiles = (S + tile - 1) / tile
	taps := l.taps()
	per := qgemmSizeA(l.mg, rows)
	threads.For(l.n*l.group*tiles, 1, func(lo, hi int) {
		col := qgemmBuf[int32](&qgemmBufs.b, rows*tile)
		defer qgemmBufs.b.Put(col)
		packed := qgemmBuf[int32](&qgemmBufs.b, qgemmSizeB(rows, tile))
		defer qgemmBufs.b.Put(packed)
		for u := lo; u < hi; u++ {
			ng, t := u/tiles, u%tiles
			n, grp := ng/l.group, ng%l.group
			s0 := t * tile
			s1 := min(s0+tile, S)
			convIm2col(l.convGeom, taps, x[(n*l.cin+grp*l.cg)*l.inSize:], l.cg, s0, s1, *col)
			qpackB(*packed, *col, rows, s1-s0, s1-s0)
			qgemm(kern, l.mg, s1-s0, rows, w[grp*per:], *packed, y[(n*l.m+grp*l.mg)*S+s0:], S)
		}
	})
}
