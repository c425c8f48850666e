package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Linear quantization: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, QLinearMatMul and QLinearConv. Scales may be
// per tensor, per axis or (from opset 21) per block along an axis; the
// quantized types are the 8- and 16-bit integers, the packed 4-bit
// integers and the float8 types. QLinearMatMul and QLinearConv run the
// MatMulInteger and ConvInteger kernels and requantize their int32 sums.

func init() {
	Register("QuantizeLinear", quantizeKernel)
	Register("DequantizeLinear", dequantizeKernel)
	Register("DynamicQuantizeLinear", dynamicQuantizeKernel)
	Register("QLinearMatMul", qlinearMatMulKernel)
	Register("QLinearConv", qlinearConvKernel)
}

// quantValues returns the elements of a numeric tensor of any width,
// including the packed 4-bit integers and the float8 types, as float64s.
func quantValues(c *Call, t *graph.Tensor) ([]float64, error) {
	if v, ok := toFloat64s(t); ok {
		return v, nil
	}
	n := t.NumElements()
	v := make([]float64, n)
	switch t.DType {
	case graph.Int4:
		for i := range v {
			v[i] = float64(graph.Int4At(t.Data, int64(i)))
		}
	case graph.Uint4:
		for i := range v {
			v[i] = float64(graph.Uint4At(t.Data, int64(i)))
		}
	case graph.Float8E4M3FN, graph.Float8E4M3FNUZ, graph.Float8E5M2, graph.Float8E5M2FNUZ, graph.Float4E2M1:
		f := make([]float32, n)
		decodeFloat32(c.Threads, f, t)
		widen(v, f)
	default:
		return nil, c.Unsupported("%s values", t.DType)
	}
	return v, nil
}

// storeQuantized writes v into dst: integer types round half to even and
// saturate; the float8 types round to nearest and saturate when asked.
func storeQuantized(c *Call, dst *graph.Tensor, v []float64, saturate bool) error {
	switch dst.DType {
	case graph.Int8, graph.Uint8, graph.Int16, graph.Uint16, graph.Int32:
		fromFloat64s(dst, v)
	case graph.Int4, graph.Uint4:
		packInts(dst, v)
	case graph.Float8E4M3FN, graph.Float8E4M3FNUZ, graph.Float8E5M2, graph.Float8E5M2FNUZ, graph.Float4E2M1:
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		encodeFloat32(c.Threads, dst, f, castOptions{saturate: saturate})
	default:
		return c.Unsupported("quantized type %s", dst.DType)
	}
	return nil
}

// quantLayout maps each element of x to the index of its scale and zero
// point: one for the tensor, one per index along axis, or one per block of
// block_size indices along axis.
func quantLayout(c *Call, xs, ss []int64) (func(i int64) int64, error) {
	n := graph.NumElements(ss)
	if len(ss) == 0 || (n == 1 && len(ss) == 1) {
		return func(int64) int64 { return 0 }, nil
	}
	axis, err := resolveAxis(c, ops.QuantizationOf(c.Node, c.Opset).Axis, len(xs))
	if err != nil {
		return nil, err
	}
	dim, inner := xs[axis], graph.NumElements(xs[axis+1:])
	bs := ops.QuantizationOf(c.Node, c.Opset).BlockSize
	if bs <= 0 {
		if len(ss) != 1 || ss[0] != dim {
			return nil, c.Errorf("scale shape %v for axis %d of %v", ss, axis, xs)
		}
		return func(i int64) int64 { return (i / inner) % dim }, nil
	}
	nb := (dim + bs - 1) / bs
	fits := len(ss) == len(xs)
	for a := range ss {
		fits = fits && (ss[a] == xs[a] || a == axis && ss[a] == nb)
	}
	if !fits {
		return nil, c.Errorf("scale shape %v for blocks of %d along axis %d of %v", ss, bs, axis, xs)
	}
	return func(i int64) int64 {
		o, d, in := i/(dim*inner), (i/inner)%dim, i%inner
		return (o*nb+d/bs)*inner + in
	}, nil
}

// zeroPoint returns the zero points of input i (nil when absent), and
// checks that they have the scale's shape.
func zeroPoint(c *Call, i int, scale *graph.Tensor) (*graph.Tensor, []float64, error) {
	zt := c.Tensor(i)
	if zt == nil {
		return nil, nil, nil
	}
	if zt.NumElements() != scale.NumElements() {
		return nil, nil, c.Errorf("zero point %v does not match scale %v", zt.Shape, scale.Shape)
	}
	z, err := quantValues(c, zt)
	return zt, z, err
}

// quantizeKernel is QuantizeLinear: y = saturate(round(x / scale) +
// zero_point), in the zero point's type, output_dtype, or uint8.
func quantizeKernel(c *Call) error {
	if quantizeFast(c) {
		return nil
	}
	x, xv, err := floatOrIntInput(c, 0)
	if err != nil {
		return err
	}
	st, sv, err := floatInput(c, 1)
	if err != nil {
		return err
	}
	at, err := quantLayout(c, x.Shape, st.Shape)
	if err != nil {
		return err
	}
	zt, zv, err := zeroPoint(c, 2, st)
	if err != nil {
		return err
	}
	dt := graph.DType(ops.QuantizationOf(c.Node, c.Opset).OutputDtype)
	switch {
	case zt != nil && dt != graph.Undefined && dt != zt.DType:
		return c.Errorf("output_dtype %s but the zero point is %s", dt, zt.DType)
	case zt != nil:
		dt = zt.DType
	case dt == graph.Undefined:
		dt = graph.Uint8
	}
	div, err := quantDivision(c, st.DType)
	if err != nil {
		return err
	}
	out := make([]float64, len(xv))
	for i, v := range xv {
		k := at(int64(i))
		q := div(v, sv[k])
		if dt.IsInt() {
			q = math.RoundToEven(q)
		}
		if zv != nil {
			q += zv[k]
		}
		out[i] = q
	}
	return storeQuantized(c, c.Output(0, dt, x.Shape), out, ops.Params[ops.QuantizeLinearParams](c.Node, c.Opset).Saturate != 0)
}

// quantDivision returns QuantizeLinear's x / y_scale at the precision the
// precision attribute (opset 23) names: float64 or float32, or float16 or
// bfloat16 (operands and quotient rounded to it). Without the attribute it
// is float64 for a float64 scale, float32 otherwise.
func quantDivision(c *Call, scale graph.DType) (func(x, s float64) float64, error) {
	p := graph.DType(ops.Params[ops.QuantizeLinearParams](c.Node, c.Opset).Precision)
	if p == graph.Undefined {
		p = graph.Float
		if scale == graph.Double {
			p = graph.Double
		}
	}
	switch p {
	case graph.Double:
		return func(x, s float64) float64 { return x / s }, nil
	case graph.Float, graph.Float16, graph.BFloat16:
		return func(x, s float64) float64 {
			return float64(roundFloat(roundFloat(float32(x), p)/roundFloat(float32(s), p), p))
		}, nil
	}
	return nil, c.Unsupported("precision %s", p)
}

// floatOrIntInput returns input i, of a float type or int32 (which
// QuantizeLinear accepts before opset 13), and its values.
func floatOrIntInput(c *Call, i int) (*graph.Tensor, []float64, error) {
	t, err := inputTensor(c, i)
	if err != nil {
		return nil, nil, err
	}
	if t.DType == graph.Int32 {
		v, _ := toFloat64s(t)
		return t, v, nil
	}
	return floatInput(c, i)
}

// dequantizeKernel is DequantizeLinear: y = (x - zero_point) * scale, in
// the scale's type (output_dtype when set).
func dequantizeKernel(c *Call) error {
	if dequantizeFast(c) {
		return nil
	}
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	xv, err := quantValues(c, x)
	if err != nil {
		return err
	}
	st, sv, err := floatInput(c, 1)
	if err != nil {
		return err
	}
	at, err := quantLayout(c, x.Shape, st.Shape)
	if err != nil {
		return err
	}
	zt, zv, err := zeroPoint(c, 2, st)
	if err != nil {
		return err
	}
	if zt != nil && zt.DType != x.DType {
		return c.Errorf("zero point is %s but x is %s", zt.DType, x.DType)
	}
	dt := st.DType
	if o := graph.DType(ops.QuantizationOf(c.Node, c.Opset).OutputDtype); o != graph.Undefined {
		dt = o
	}
	single := st.DType != graph.Double
	out := make([]float64, len(xv))
	for i, v := range xv {
		k := at(int64(i))
		if zv != nil {
			v -= zv[k]
		}
		out[i] = v * sv[k]
		if single {
			out[i] = float64(float32(v) * float32(sv[k]))
		}
	}
	return floatOutput(c, 0, dt, x.Shape, out)
}

// dynamicQuantizeKernel is DynamicQuantizeLinear: the uint8 quantization
// of x whose range, widened to include 0, maps onto [0, 255]; outputs y,
// the scale and the zero point.
func dynamicQuantizeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if x.DType != graph.Float {
		return c.Unsupported("input of type %s", x.DType)
	}
	xv := graph.View[float32](x)[:x.NumElements()]
	lo, hi := dynQuantRange(xv)
	scale := (hi - lo) / 255
	zp := float32(0)
	if scale != 0 {
		zp = float32(min(max(math.RoundToEven(float64(-lo/scale)), 0), 255))
	}
	dynQuantize(c.Output(0, graph.Uint8, x.Shape).Data, xv, scale, zp)
	if len(c.Out) > 1 {
		graph.View[float32](c.Output(1, graph.Float, nil))[0] = scale
	}
	if len(c.Out) > 2 {
		c.Output(2, graph.Uint8, nil).Data[0] = uint8(zp)
	}
	return nil
}

// dynQuantRangeGo returns the least and greatest of x and 0 (NaN when x
// holds one).
func dynQuantRangeGo(x []float32) (lo, hi float32) {
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// dynQuantizeGo sets y = saturate(round(x / scale) + zp) in uint8, with
// ties to even; zp when scale is 0.
func dynQuantizeGo(y []uint8, x []float32, scale, zp float32) {
	for i, v := range x {
		q := float64(zp)
		if scale != 0 {
			q += math.RoundToEven(float64(v / scale))
		}
		y[i] = uint8(min(max(q, 0), 255))
	}
}

// integerSum runs the registered kernel op (MatMulInteger or ConvInteger)
// on c's inputs at indices (a, b and their zero points) and returns its
// int32 output. The kernel gets c's threads and its step's plan cache (so
// that it packs a constant weight once), which the QLinear kernels do not
// use themselves.
func integerSum(c *Call, op string, indices ...int) (*graph.Tensor, error) {
	k := Lookup(graph.DefaultDomain, op)
	if k == nil {
		return nil, c.Unsupported("no %s kernel", op)
	}
	sc := &Call{Node: c.Node, Opset: 10, Out: make([]graph.Value, 1), Threads: c.Threads, memo: c.memo}
	for _, i := range indices {
		if t := c.Tensor(i); t != nil {
			sc.In = append(sc.In, t)
		} else {
			sc.In = append(sc.In, nil)
		}
		sc.consts = append(sc.consts, c.Const(i))
	}
	if err := k(sc); err != nil {
		return nil, err
	}
	t, ok := sc.Out[0].(*graph.Tensor)
	if !ok || t.DType != graph.Int32 {
		return nil, c.Errorf("%s gave no int32 tensor", op)
	}
	return t, nil
}

// scaleValues returns input i, a float scale, as float64s, checking that
// it has 1 or want values.
func scaleValues(c *Call, i int, want int) ([]float64, error) {
	_, v, err := floatInput(c, i)
	if err != nil {
		return nil, err
	}
	if len(v) != 1 && len(v) != want {
		return nil, c.Errorf("input %d holds %d scales, want 1 or %d", i, len(v), want)
	}
	return v, nil
}

// requantize stores acc·scale(i) / y_scale + y_zero_point into output 0 in
// the type of the zero point at input yzp (uint8 when absent); scale is
// the same over each aligned block of inner elements (inner ≥ 1 divides
// acc's size).
func requantize(c *Call, acc *graph.Tensor, scale func(i int) float64, inner, ys, yzp int) error {
	yScale, err := scaleValues(c, ys, 1)
	if err != nil {
		return err
	}
	dt, zp := graph.Uint8, 0.0
	if zt := c.Tensor(yzp); zt != nil {
		z, err := quantValues(c, zt)
		if err != nil {
			return err
		}
		if len(z) != 1 {
			return c.Errorf("y_zero_point %v is not a scalar", zt.Shape)
		}
		dt, zp = zt.DType, z[0]
	}
	a := graph.View[int32](acc)[:acc.NumElements()]
	switch dt {
	case graph.Uint8:
		requantize8(c.Threads, c.Output(0, dt, acc.Shape).Data, a, scale, inner, yScale[0], zp, 0, math.MaxUint8)
		return nil
	case graph.Int8:
		requantize8(c.Threads, graph.View[int8](c.Output(0, dt, acc.Shape)), a, scale, inner, yScale[0], zp, math.MinInt8, math.MaxInt8)
		return nil
	}
	out := make([]float64, len(a))
	for i, v := range a {
		q := float64(v) * scale(i) / yScale[0]
		if dt.IsInt() {
			q = math.RoundToEven(q)
		}
		out[i] = q + zp
	}
	return storeQuantized(c, c.Output(0, dt, acc.Shape), out, true)
}

// requantize8 is requantize's arithmetic and saturation (storeQuantized's)
// for an 8-bit y, stored directly, taking scale once per block of inner
// elements.
func requantize8[T int8 | uint8](threads *Threads, y []T, acc []int32, scale func(i int) float64, inner int, ys, zp float64, lo, hi T) {
	threads.For(len(acc)/inner, max(1, parallelGrain/inner), func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			s := scale(b * inner)
			for i := b * inner; i < (b+1)*inner; i++ {
				q := math.RoundToEven(float64(acc[i])*s/ys) + zp
				switch {
				case q != q:
					y[i] = 0
				case q <= float64(lo):
					y[i] = lo
				case q >= float64(hi):
					y[i] = hi
				default:
					y[i] = T(q)
				}
			}
		}
	})
}

// qlinearMatMulKernel is QLinearMatMul: the matrix product of the
// dequantized a and b, quantized with y_scale and y_zero_point. a_scale
// may hold one value per row of a and b_scale one per column of b.
func qlinearMatMulKernel(c *Call) error {
	a, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	b, err := inputTensor(c, 3)
	if err != nil {
		return err
	}
	acc, err := integerSum(c, "MatMulInteger", 0, 3, 2, 5)
	if err != nil {
		return err
	}
	m, n := 1, 1
	if a.Rank() > 1 {
		m = int(a.Shape[a.Rank()-2])
	}
	if b.Rank() > 1 {
		n = int(b.Shape[b.Rank()-1])
	}
	as, err := scaleValues(c, 1, m)
	if err != nil {
		return err
	}
	bs, err := scaleValues(c, 4, n)
	if err != nil {
		return err
	}
	inner := 1
	if len(bs) == 1 {
		inner = max(n, 1)
	}
	return requantize(c, acc, func(i int) float64 {
		return as[(i/n)%m%len(as)] * bs[i%n%len(bs)]
	}, inner, 6, 7)
}

// qlinearConvKernel is QLinearConv: the convolution of the dequantized x
// and w (w_scale per tensor or per output channel) plus the int32 bias B
// (scale x_scale·w_scale), quantized with y_scale and y_zero_point.
func qlinearConvKernel(c *Call) error {
	if _, err := inputTensor(c, 0); err != nil {
		return err
	}
	if _, err := inputTensor(c, 3); err != nil {
		return err
	}
	acc, err := integerSum(c, "ConvInteger", 0, 3, 2, 5)
	if err != nil {
		return err
	}
	m := int(acc.Shape[1])
	spatial := int(graph.NumElements(acc.Shape[2:]))
	xs, err := scaleValues(c, 1, 1)
	if err != nil {
		return err
	}
	ws, err := scaleValues(c, 4, m)
	if err != nil {
		return err
	}
	if bt := c.Tensor(8); bt != nil {
		bias, err := indexValues(c, bt)
		if err != nil {
			return err
		}
		if len(bias) != m {
			return c.Errorf("%d biases for %d output channels", len(bias), m)
		}
		a := graph.View[int32](acc)[:acc.NumElements()]
		for i := range a {
			a[i] += int32(bias[(i/spatial)%m])
		}
	}
	return requantize(c, acc, func(i int) float64 {
		return xs[0] * ws[(i/spatial)%m%len(ws)]
	}, max(spatial, 1), 6, 7)
}

// quantAxis returns the geometry of a per-tensor or per-axis float32
// scale (zero points, when given, of the same count): scale d applies to
// rows r with r % dim == d of the [outer·dim, inner] view of x. ok is false
// for other layouts, which the general path handles (or refuses).
func quantAxis(c *Call, x, s, zp *graph.Tensor) (dim, inner int, ok bool) {
	if s.DType != graph.Float || ops.QuantizationOf(c.Node, c.Opset).BlockSize > 0 || (zp != nil && zp.NumElements() != s.NumElements()) {
		return 0, 0, false
	}
	n := int(x.NumElements())
	if s.Rank() == 0 || (s.Rank() == 1 && s.Shape[0] == 1) {
		return 1, n, true
	}
	axis := ops.QuantizationOf(c.Node, c.Opset).Axis
	if s.Rank() != 1 || axis < -int64(x.Rank()) || axis >= int64(x.Rank()) {
		return 0, 0, false
	}
	if axis < 0 {
		axis += int64(x.Rank())
	}
	if x.Shape[axis] != s.Shape[0] {
		return 0, 0, false
	}
	return int(s.Shape[0]), int(graph.NumElements(x.Shape[axis+1:])), true
}

// quantizeFast quantizes float32 to int8 or uint8 with a float32 scale per
// tensor or per axis, the hot case of QDQ models, without the general
// path's float64 copies. It reports false, doing nothing, for other cases.
func quantizeFast(c *Call) bool {
	x, s, zp := c.Tensor(0), c.Tensor(1), c.Tensor(2)
	if p := graph.DType(ops.Params[ops.QuantizeLinearParams](c.Node, c.Opset).Precision); p != graph.Undefined && p != graph.Float {
		return false
	}
	if x == nil || s == nil || x.DType != graph.Float {
		return false
	}
	dt := graph.DType(ops.QuantizationOf(c.Node, c.Opset).OutputDtype)
	switch {
	case zp != nil && dt != graph.Undefined && dt != zp.DType:
		return false
	case zp != nil:
		dt = zp.DType
	case dt == graph.Undefined:
		dt = graph.Uint8
	}
	if dt != graph.Uint8 && dt != graph.Int8 {
		return false
	}
	dim, inner, ok := quantAxis(c, x, s, zp)
	if !ok {
		return false
	}
	y := c.Output(0, dt, x.Shape)
	xv, sv := graph.View[float32](x), graph.View[float32](s)
	if dt == graph.Uint8 {
		quantize8(c.Threads, y.Data, xv, sv, zeroPoints[uint8](zp, dim), dim, inner, 0, 255)
	} else {
		quantize8(c.Threads, graph.View[int8](y), xv, sv, zeroPoints[int8](zp, dim), dim, inner, -128, 127)
	}
	return true
}

// zeroPoints returns the zero points as float32s, zeros when absent.
func zeroPoints[T int8 | uint8](zp *graph.Tensor, dim int) []float32 {
	z := make([]float32, dim)
	if zp != nil {
		for i, v := range typedView[T](zp.Data)[:dim] {
			z[i] = float32(v)
		}
	}
	return z
}

// quantize8 sets y = saturate(round(x / scale) + zero point), NaN giving 0.
func quantize8[T int8 | uint8](threads *Threads, y []T, x, scale, zp []float32, dim, inner int, lo, hi float32) {
	threads.For(len(x)/max(inner, 1), max(1, parallelGrain/max(inner, 1)), func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			sc, z := scale[r%dim], zp[r%dim]
			for i := r * inner; i < (r+1)*inner; i++ {
				q := float32(math.RoundToEven(float64(x[i]/sc))) + z
				switch {
				case q != q:
					q = 0
				case q < lo:
					q = lo
				case q > hi:
					q = hi
				}
				y[i] = T(q)
			}
		}
	})
}

// dequantizeFast dequantizes int8 or uint8 to float32 with a float32 scale
// per tensor or per axis, the hot case of QDQ models. It reports false,
// doing nothing, for other cases.
func dequantizeFast(c *Call) bool {
	x, s, zp := c.Tensor(0), c.Tensor(1), c.Tensor(2)
	if x == nil || s == nil || (x.DType != graph.Uint8 && x.DType != graph.Int8) || (zp != nil && zp.DType != x.DType) {
		return false
	}
	if o := graph.DType(ops.QuantizationOf(c.Node, c.Opset).OutputDtype); o != graph.Undefined && o != graph.Float {
		return false
	}
	dim, inner, ok := quantAxis(c, x, s, zp)
	if !ok {
		return false
	}
	y := graph.View[float32](c.Output(0, graph.Float, x.Shape))
	sv := graph.View[float32](s)
	if x.DType == graph.Uint8 {
		dequantize8(c.Threads, y, x.Data, sv, zeroPoints[uint8](zp, dim), dim, inner)
	} else {
		dequantize8(c.Threads, y, graph.View[int8](x), sv, zeroPoints[int8](zp, dim), dim, inner)
	}
	return true
}

// dequantize8 sets y = (x − zero point)·scale.
func dequantize8[T int8 | uint8](threads *Threads, y []float32, x []T, scale, zp []float32, dim, inner int) {
	threads.For(len(y)/max(inner, 1), max(1, parallelGrain/max(inner, 1)), func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			sc, z := scale[r%dim], zp[r%dim]
			for i := r * inner; i < (r+1)*inner; i++ {
				y[i] = (float32(x[i]) - z) * sc
			}
		}
	})
}
