package ops

import (
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// Neural-network ops: convolutions, pooling, normalisations, Gemm, MatMul,
// recurrent layers.

func init() {
	setRule(inferConv, "Conv", "ConvInteger", "DeformConv")
	SetInfer("", "QLinearConv", 0, 0, inferQLinearConv)
	setRule(inferConvTranspose, "ConvTranspose")
	setRule(inferPool, "MaxPool", "AveragePool", "LpPool")
	setRule(inferGlobalPool, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
	setRule(inferMaxRoiPool, "MaxRoiPool")
	setRule(inferMaxUnpool, "MaxUnpool")
	setRule(inferBatchNorm, "BatchNormalization")
	setRule(passThrough, "InstanceNormalization", "GroupNormalization", "LpNormalization")
	setRule(inferLayerNorm, "LayerNormalization")
	setRule(inferGemm, "Gemm")
	setRule(inferMatMul, "MatMul", "MatMulInteger")
	SetInfer("", "QLinearMatMul", 0, 0, inferQLinearMatMul)
	setRule(inferRNN, "RNN", "GRU", "LSTM")
}

// spatialParams are the window parameters of a convolution or pooling.
type spatialParams struct {
	kernel, strides, dilations, pads []int64
	autoPad                          string
	ceil                             bool
}

// readSpatial reads the window attributes for n spatial axes; kernel may
// come from the weights when the attribute is absent.
func readSpatial(c *InferContext, n int, kernel []int64) (*spatialParams, error) {
	w := WindowOf(c.Node, c.Opset)
	if w == nil {
		w = &Window{}
	}
	p := &spatialParams{
		kernel:    w.KernelFor(kernel),
		strides:   w.StridesFor(n),
		dilations: w.DilationsFor(n),
		pads:      w.PadsFor(n),
		autoPad:   w.AutoPad,
	}
	switch q := ParamsOf(c.Node, c.Opset).(type) {
	case *AveragePoolParams:
		p.ceil = q.CeilMode != 0
	case *MaxPoolParams:
		p.ceil = q.CeilMode != 0
	case *LpPoolParams:
		p.ceil = q.CeilMode != 0
	}
	if p.kernel == nil {
		return nil, nil
	}
	if len(p.kernel) != n {
		return nil, fmt.Errorf("kernel_shape %v for %d spatial axes", p.kernel, n)
	}
	if len(p.strides) != n {
		return nil, fmt.Errorf("strides %v for %d spatial axes", p.strides, n)
	}
	if len(p.dilations) != n {
		return nil, fmt.Errorf("dilations %v for %d spatial axes", p.dilations, n)
	}
	if len(p.pads) != 2*n {
		return nil, fmt.Errorf("pads %v for %d spatial axes", p.pads, n)
	}
	for i := range n {
		if p.strides[i] <= 0 || p.dilations[i] <= 0 {
			return nil, fmt.Errorf("strides %v and dilations %v must be positive", p.strides, p.dilations)
		}
	}
	return p, nil
}

// PoolPadsFit fails when a pooling window's padding (pads: the begin
// paddings of each axis, then the end paddings) reaches the window's
// extent, (kernel-1)·dilation+1, on either side of an axis: a window
// there would cover padding alone. Shape inference and the kernels share
// it.
func PoolPadsFit[T ~int | ~int64](kernel, dilations, pads []T) error {
	n := len(kernel)
	if len(dilations) != n || len(pads) != 2*n {
		return fmt.Errorf("kernel_shape %v, dilations %v and pads %v disagree on the number of axes", kernel, dilations, pads)
	}
	for d := range n {
		if k := (kernel[d]-1)*dilations[d] + 1; pads[d] >= k || pads[d+n] >= k {
			return fmt.Errorf("pads %v must be smaller than the kernel's extent along each axis (kernel_shape %v, dilations %v)", pads, kernel, dilations)
		}
	}
	return nil
}

// OutputPaddingFits fails when ConvTranspose's output_padding along an
// axis is not smaller than the stride or the dilation there. Shape
// inference and the kernels share it.
func OutputPaddingFits[T ~int | ~int64](outPad, strides, dilations []T) error {
	if len(strides) != len(outPad) || len(dilations) != len(outPad) {
		return fmt.Errorf("output_padding %v, strides %v and dilations %v disagree on the number of axes", outPad, strides, dilations)
	}
	for d, p := range outPad {
		if p >= max(strides[d], dilations[d]) {
			return fmt.Errorf("output_padding %v must be smaller than the stride or the dilation along each axis (strides %v, dilations %v)", outPad, strides, dilations)
		}
	}
	return nil
}

// outDim is the output size of spatial axis i for input size d.
func (p *spatialParams) outDim(i int, d graph.Dim) (graph.Dim, error) {
	k := (p.kernel[i]-1)*p.dilations[i] + 1
	s := p.strides[i]
	pad := p.pads[i] + p.pads[i+len(p.kernel)]
	if !d.Known() {
		identity := (p.autoPad == "SAME_UPPER" || p.autoPad == "SAME_LOWER") && s == 1 ||
			p.autoPad != "SAME_UPPER" && p.autoPad != "SAME_LOWER" && s == 1 && k == 1 && (pad == 0 || p.autoPad == "VALID")
		if identity {
			return d, nil
		}
		return graph.UnknownDim(), nil
	}
	in := d.Value
	switch p.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		return graph.DimOf((in + s - 1) / s), nil
	case "VALID":
		pad = 0
	case "NOTSET", "":
	default:
		return d, fmt.Errorf("unknown auto_pad %q", p.autoPad)
	}
	span := in + pad - k
	if span < 0 {
		return d, fmt.Errorf("window of %d larger than padded input %d", k, in+pad)
	}
	out := span/s + 1
	if p.ceil {
		out = (span+s-1)/s + 1
		if (out-1)*s >= in+p.pads[i] {
			out--
		}
	}
	return graph.DimOf(out), nil
}

// windowShape is [N, channels, spatial outputs...] for input shape x.
func windowShape(p *spatialParams, x graph.Shape, channels graph.Dim) (graph.Shape, error) {
	out := graph.Shape{x[0], channels}
	for i, d := range x[2:] {
		o, err := p.outDim(i, d)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// inferConv is Conv (and ConvInteger, DeformConv): X [N C D...], W [M C/g k...].
func inferConv(c *InferContext) error {
	dt := c.inElem(0)
	if c.Node.OpType == "ConvInteger" {
		dt = graph.Int32
	}
	return convShape(c, 0, 1, dt)
}

// inferQLinearConv is QLinearConv: x, w at inputs 0 and 3, y_zero_point at 7.
func inferQLinearConv(c *InferContext) error {
	dt := c.inElem(7)
	if dt == graph.Undefined {
		dt = c.inElem(0)
	}
	return convShape(c, 0, 3, dt)
}

// convGroup is the node's group count, 1 for an op without one.
func convGroup(c *InferContext) int64 {
	if g := ConvGroupOf(c.Node, c.Opset); g != nil {
		return g.Group
	}
	return 1
}

// convShape infers a convolution's output from input x and weights w.
func convShape(c *InferContext, x, w int, dt graph.DType) error {
	xs, ws := c.inShape(x), c.inShape(w)
	rank := len(xs)
	if xs == nil {
		rank = len(ws)
	}
	if xs == nil && ws == nil {
		if w := WindowOf(c.Node, c.Opset); w != nil {
			rank = len(w.KernelShape) + 2
		} else {
			rank = 2
		}
		if rank == 2 {
			c.setTensor(0, dt, nil)
			return nil
		}
	}
	if rank < 3 || (ws != nil && len(ws) != rank) {
		return fmt.Errorf("convolution needs X and W of one rank >= 3, got %v and %v", xs, ws)
	}
	if xs == nil {
		xs = unknownShape(rank)
	}
	channels := graph.UnknownDim()
	var kernel []int64
	if ws != nil {
		channels = ws[0]
		if g := convGroup(c); xs[1].Known() && ws[1].Known() && xs[1].Value != ws[1].Value*g {
			return fmt.Errorf("input channels %d do not match weights %v with group %d", xs[1].Value, ws, g)
		}
		if ws[2:].Known() {
			kernel = ws[2:].Ints()
		}
	}
	p, err := readSpatial(c, rank-2, kernel)
	if err != nil {
		return err
	}
	if p == nil {
		s := unknownShape(rank)
		s[0], s[1] = xs[0], channels
		c.setTensor(0, dt, s)
		return nil
	}
	s, err := windowShape(p, xs, channels)
	if err != nil {
		return err
	}
	c.setTensor(0, dt, s)
	return nil
}

// inferConvTranspose is ConvTranspose: X [N C D...], W [C M/g k...].
func inferConvTranspose(c *InferContext) error {
	dt := c.inElem(0)
	xs, ws := c.inShape(0), c.inShape(1)
	if len(xs) < 3 {
		if xs != nil {
			return fmt.Errorf("input of rank %d", len(xs))
		}
		c.setTensor(0, dt, nil)
		return nil
	}
	n := len(xs) - 2
	channels := graph.UnknownDim()
	var kernel []int64
	if ws != nil {
		if len(ws) != len(xs) {
			return fmt.Errorf("weights %v for input %v", ws, xs)
		}
		channels = dimMul(ws[1], graph.DimOf(convGroup(c)))
		if ws[2:].Known() {
			kernel = ws[2:].Ints()
		}
	}
	ct := Params[ConvTransposeParams](c.Node, c.Opset)
	outPad := ct.OutputPaddingFor(n)
	if len(outPad) != n {
		return fmt.Errorf("output_padding %v for %d spatial axes", outPad, n)
	}
	strides, dilations := ct.StridesFor(n), ct.DilationsFor(n)
	if len(strides) == n && len(dilations) == n {
		if err := OutputPaddingFits(outPad, strides, dilations); err != nil {
			return err
		}
	}
	out := graph.Shape{xs[0], channels}
	if os := ct.OutputShape; os != nil {
		if len(os) == n+2 {
			os = os[2:]
		}
		if len(os) != n {
			return fmt.Errorf("output_shape %v for %d spatial axes", os, n)
		}
		c.setTensor(0, dt, append(out, dimsFromInts(os)...))
		return nil
	}
	p, err := readSpatial(c, n, kernel)
	if err != nil {
		return err
	}
	if p == nil {
		c.setTensor(0, dt, append(out, unknownShape(n)...))
		return nil
	}
	for i, d := range xs[2:] {
		if !d.Known() {
			out = append(out, graph.UnknownDim())
			continue
		}
		s := p.strides[i]
		switch p.autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out = append(out, graph.DimOf(d.Value*s))
		default:
			pad := p.pads[i] + p.pads[i+n]
			if p.autoPad == "VALID" {
				pad = 0
			}
			o := s*(d.Value-1) + outPad[i] + (p.kernel[i]-1)*p.dilations[i] + 1 - pad
			if o < 0 {
				return fmt.Errorf("negative output size %d on spatial axis %d", o, i)
			}
			out = append(out, graph.DimOf(o))
		}
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferPool is MaxPool, AveragePool and LpPool; MaxPool's second output
// holds int64 indices.
func inferPool(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, nil)
		c.setTensor(1, graph.Int64, nil)
		return nil
	}
	if len(xs) < 3 {
		return fmt.Errorf("pooling input of rank %d", len(xs))
	}
	p, err := readSpatial(c, len(xs)-2, nil)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("missing kernel_shape")
	}
	if err := PoolPadsFit(p.kernel, p.dilations, p.pads); err != nil {
		return err
	}
	s, err := windowShape(p, xs, xs[1])
	if err != nil {
		return err
	}
	c.setTensor(0, dt, s)
	c.setTensor(1, graph.Int64, s.Clone())
	return nil
}

// inferGlobalPool gives [N C 1 1 ...].
func inferGlobalPool(c *InferContext) error {
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, c.inElem(0), nil)
		return nil
	}
	if len(xs) < 2 {
		return fmt.Errorf("global pooling input of rank %d", len(xs))
	}
	s := graph.Shape{xs[0], xs[1]}
	for range xs[2:] {
		s = append(s, graph.DimOf(1))
	}
	c.setTensor(0, c.inElem(0), s)
	return nil
}

// inferMaxRoiPool gives [num_rois C pooled_shape...].
func inferMaxRoiPool(c *InferContext) error {
	xs, rois := c.inShape(0), c.inShape(1)
	pooled := Params[MaxRoiPoolParams](c.Node, c.Opset).PooledShape
	s := graph.Shape{graph.UnknownDim(), graph.UnknownDim()}
	if len(rois) == 2 {
		s[0] = rois[0]
	}
	if len(xs) >= 2 {
		s[1] = xs[1]
	}
	c.setTensor(0, c.inElem(0), append(s, dimsFromInts(pooled)...))
	return nil
}

// inferMaxUnpool uses the output_shape input when known, else the inverse
// of the pooling arithmetic.
func inferMaxUnpool(c *InferContext) error {
	dt := c.inElem(0)
	if c.has(2) {
		if v, ok := c.intsIn(2); ok {
			c.setTensor(0, dt, dimsFromInts(v))
		} else if n := c.lenOf1D(2); n >= 0 {
			c.setTensor(0, dt, unknownShape(n))
		}
		return nil
	}
	xs := c.inShape(0)
	if len(xs) < 3 {
		c.setTensor(0, dt, nil)
		return nil
	}
	p, err := readSpatial(c, len(xs)-2, nil)
	if err != nil || p == nil {
		return err
	}
	out := graph.Shape{xs[0], xs[1]}
	n := len(p.kernel)
	for i, d := range xs[2:] {
		if !d.Known() {
			out = append(out, graph.UnknownDim())
			continue
		}
		out = append(out, graph.DimOf((d.Value-1)*p.strides[i]+p.kernel[i]-p.pads[i]-p.pads[i+n]))
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferBatchNorm gives Y the type of X and the optional statistics outputs
// (running mean and variance, saved mean and variance) the type of the
// mean input, a vector of C.
func inferBatchNorm(c *InferContext) error {
	c.set(0, c.in(0).Clone())
	stat := c.inTensor(3)
	dt := c.inElem(0)
	if stat != nil {
		dt = stat.Elem
	}
	ch := graph.UnknownDim()
	if xs := c.inShape(0); len(xs) >= 2 {
		ch = xs[1]
	}
	for i := 1; i < len(c.OutTypes); i++ {
		c.setTensor(i, dt, graph.Shape{ch})
	}
	return nil
}

// inferLayerNorm is LayerNormalization: Y like X; Mean and InvStdDev keep
// the leading axes and have size 1 from axis on, in the stash type.
func inferLayerNorm(c *InferContext) error {
	c.set(0, c.in(0).Clone())
	p := Params[LayerNormalizationParams](c.Node, c.Opset)
	stash := graph.DType(p.StashType)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(1, stash, nil)
		c.setTensor(2, stash, nil)
		return nil
	}
	axis, err := normAxis(p.Axis, len(xs))
	if err != nil {
		return err
	}
	s := xs.Clone()
	for i := axis; i < len(s); i++ {
		s[i] = graph.DimOf(1)
	}
	c.setTensor(1, stash, s)
	c.setTensor(2, stash, s.Clone())
	return nil
}

// inferGemm is Gemm: op(A) [M K] times op(B) [K N] gives [M N].
func inferGemm(c *InferContext) error {
	dt := c.inElem(0)
	as, bs := c.inShape(0), c.inShape(1)
	p := Params[GemmParams](c.Node, c.Opset)
	out := graph.Shape{graph.UnknownDim(), graph.UnknownDim()}
	if as != nil {
		if len(as) != 2 {
			return fmt.Errorf("matrix A of rank %d", len(as))
		}
		if p.TransA != 0 {
			out[0] = as[1]
		} else {
			out[0] = as[0]
		}
	}
	if bs != nil {
		if len(bs) != 2 {
			return fmt.Errorf("matrix B of rank %d", len(bs))
		}
		if p.TransB != 0 {
			out[1] = bs[0]
		} else {
			out[1] = bs[1]
		}
	}
	if as != nil && bs != nil {
		ka, kb := as[1], bs[0]
		if p.TransA != 0 {
			ka = as[0]
		}
		if p.TransB != 0 {
			kb = bs[1]
		}
		if _, err := unifyDim(ka, kb); err != nil {
			return fmt.Errorf("inner dimensions: %w", err)
		}
	}
	c.setTensor(0, dt, out)
	return nil
}

// matmulShape is numpy's matmul shape rule: 1-D operands are promoted and
// the promoted axis dropped, batch axes broadcast.
func matmulShape(a, b graph.Shape) (graph.Shape, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("matrix product of a scalar")
	}
	a1, b1 := len(a) == 1, len(b) == 1
	if a1 {
		a = graph.Shape{graph.DimOf(1), a[0]}
	}
	if b1 {
		b = graph.Shape{b[0], graph.DimOf(1)}
	}
	if _, err := unifyDim(a[len(a)-1], b[len(b)-2]); err != nil {
		return nil, fmt.Errorf("inner dimensions of %v and %v: %w", a, b, err)
	}
	batch, err := broadcast(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return nil, err
	}
	out := batch.Clone()
	if !a1 {
		out = append(out, a[len(a)-2])
	}
	if !b1 {
		out = append(out, b[len(b)-1])
	}
	return out, nil
}

// inferMatMul is MatMul and MatMulInteger (int32 output).
func inferMatMul(c *InferContext) error {
	s, err := matmulShape(c.inShape(0), c.inShape(1))
	if err != nil {
		return err
	}
	dt := c.inElem(0)
	if c.Node.OpType == "MatMulInteger" {
		dt = graph.Int32
	}
	c.setTensor(0, dt, s)
	return nil
}

// inferMatMulTransB is the planner's MatMulTransB: MatMul with B's last
// two axes swapped.
func inferMatMulTransB(c *InferContext) error {
	b := c.inShape(1)
	if b == nil {
		return nil
	}
	if len(b) < 2 {
		return fmt.Errorf("B must have rank ≥ 2, got %v", b)
	}
	bt := slices.Clone(b)
	bt[len(bt)-2], bt[len(bt)-1] = bt[len(bt)-1], bt[len(bt)-2]
	s, err := matmulShape(c.inShape(0), bt)
	if err != nil {
		return err
	}
	c.setTensor(0, c.inElem(0), s)
	return nil
}

// inferQLinearMatMul is QLinearMatMul: a at 0, b at 3, y_zero_point at 7.
func inferQLinearMatMul(c *InferContext) error {
	s, err := matmulShape(c.inShape(0), c.inShape(3))
	if err != nil {
		return err
	}
	dt := c.inElem(7)
	if dt == graph.Undefined {
		dt = c.inElem(0)
	}
	c.setTensor(0, dt, s)
	return nil
}

// inferRNN is RNN, GRU and LSTM: Y [seq dirs batch hidden] (layout 0) or
// [batch seq dirs hidden] (layout 1), Y_h and Y_c [dirs batch hidden] or
// [batch dirs hidden].
func inferRNN(c *InferContext) error {
	dt := c.inElem(0)
	xs, ws := c.inShape(0), c.inShape(1)
	dirs := int64(1)
	rec := RecurrentOf(c.Node, c.Opset)
	if rec.Direction == "bidirectional" {
		dirs = 2
	}
	gates := map[string]int64{"RNN": 1, "GRU": 3, "LSTM": 4}[c.Node.OpType]
	hidden := graph.UnknownDim()
	if h := rec.HiddenSize; h != nil && *h > 0 {
		hidden = graph.DimOf(*h)
	} else if len(ws) == 3 && ws[1].Known() {
		hidden = graph.DimOf(ws[1].Value / gates)
	}
	seq, batch := graph.UnknownDim(), graph.UnknownDim()
	layout := rec.Layout
	if len(xs) == 3 {
		seq, batch = xs[0], xs[1]
		if layout != 0 {
			seq, batch = xs[1], xs[0]
		}
	}
	d := graph.DimOf(dirs)
	if layout == 0 {
		c.setTensor(0, dt, graph.Shape{seq, d, batch, hidden})
		c.setTensor(1, dt, graph.Shape{d, batch, hidden})
		c.setTensor(2, dt, graph.Shape{d, batch, hidden})
	} else {
		c.setTensor(0, dt, graph.Shape{batch, seq, d, hidden})
		c.setTensor(1, dt, graph.Shape{batch, d, hidden})
		c.setTensor(2, dt, graph.Shape{batch, d, hidden})
	}
	return nil
}
