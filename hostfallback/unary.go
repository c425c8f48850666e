package hostfallback

import (
	"math"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	for name, u := range map[string]unaryOp{
		"Abs":        {f32: absLoop[float32], f64: absLoop[float64], ints: intAbs},
		"Neg":        {f32: negLoop[float32], f64: negLoop[float64], ints: intNeg},
		"Sign":       {f32: signLoop[float32], f64: signLoop[float64], ints: intSign},
		"Exp":        {f32: expLoop[float32], f64: expLoop[float64]},
		"Log":        {f32: logLoop[float32], f64: logLoop[float64]},
		"Sqrt":       {f32: sqrtLoop[float32], f64: sqrtLoop[float64]},
		"Reciprocal": {f32: reciprocalLoop[float32], f64: reciprocalLoop[float64]},
		"Floor":      {f32: floorLoop[float32], f64: floorLoop[float64]},
		"Ceil":       {f32: ceilLoop[float32], f64: ceilLoop[float64]},
		"Round":      {f32: roundLoop[float32], f64: roundLoop[float64]},
		"Sin":        {f32: sinLoop[float32], f64: sinLoop[float64]},
		"Cos":        {f32: cosLoop[float32], f64: cosLoop[float64]},
		"Tan":        {f32: tanLoop[float32], f64: tanLoop[float64]},
		"Asin":       {f32: asinLoop[float32], f64: asinLoop[float64]},
		"Acos":       {f32: acosLoop[float32], f64: acosLoop[float64]},
		"Atan":       {f32: atanLoop[float32], f64: atanLoop[float64]},
		"Sinh":       {f32: sinhLoop[float32], f64: sinhLoop[float64]},
		"Cosh":       {f32: coshLoop[float32], f64: coshLoop[float64]},
		"Asinh":      {f32: asinhLoop[float32], f64: asinhLoop[float64]},
		"Acosh":      {f32: acoshLoop[float32], f64: acoshLoop[float64]},
		"Atanh":      {f32: atanhLoop[float32], f64: atanhLoop[float64]},
		"Erf":        {f32: erfLoopF32, f64: erfLoop[float64]},
		"BitwiseNot": {ints: intBitNot},
	} {
		registerUnary(name, u)
	}
	Register("IsNaN", isNaNKernel)
	Register("IsInf", isInfKernel)
	Register("Identity", identityKernel)
}

// unaryParams are a unary kernel's attributes, read once per call: alpha
// and beta are its first and second float attributes.
type unaryParams struct {
	alpha, beta float64
	// tanh selects Gelu's tanh approximation.
	tanh bool
}

// unaryOp is one elementwise unary op: loops for float32 and float64 (the
// 16-bit float types run through float32), an integer variant, and a
// reader for its attributes.
type unaryOp struct {
	f32 func(d, s []float32, p *unaryParams)
	f64 func(d, s []float64, p *unaryParams)
	// ints selects the integer variant; intNone: float types only.
	ints intUnaryOp
	// params reads the node's attributes; nil when it has none.
	params func(c *Call) unaryParams
}

// intUnaryOp names the integer variant of a unary op.
type intUnaryOp uint8

const (
	intNone intUnaryOp = iota
	intAbs
	intNeg
	intSign
	intRelu
	intShrink
	intBitNot
)

// registerUnary registers the kernel of unary op u, with the element types
// its loops take.
func registerUnary(name string, u unaryOp) {
	var ts Types
	if u.f32 != nil {
		ts = append(ts, graph.Float, graph.Float16, graph.BFloat16)
	}
	if u.f64 != nil {
		ts = append(ts, graph.Double)
	}
	if u.ints != intNone {
		ts = append(ts, ints...)
	}
	RegisterChecked(name, unaryKernel(u), Support{In: []Types{ts}})
}

// ints are the integer types intUnary has a case for.
var ints = Types{graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64}

// unaryKernel returns the kernel of a unary op: output 0 has input 0's type
// and shape. Its Support (registerUnary) admits only the types it has a
// loop for.
func unaryKernel(u unaryOp) Kernel {
	var k Kernel
	k = func(c *Call) error {
		x, err := inputTensor(c, 0)
		if err != nil {
			return err
		}
		if isHalf(x.DType) && u.f32 != nil {
			return viaFloat32(c, x.DType, k)
		}
		var p unaryParams
		if u.params != nil {
			p = u.params(c)
		}
		switch {
		case x.DType == graph.Float && u.f32 != nil:
			parallelUnary(c.Threads, graph.View[float32](c.OutputUninit(0, x.DType, x.Shape)), graph.View[float32](x), u.f32, &p)
		case x.DType == graph.Double && u.f64 != nil:
			parallelUnary(c.Threads, graph.View[float64](c.OutputUninit(0, x.DType, x.Shape)), graph.View[float64](x), u.f64, &p)
		case u.ints != intNone && ints.Has(x.DType):
			return intUnary(c, u.ints, x, &p)
		default:
			return c.Unsupported("element type %s", x.DType)
		}
		return nil
	}
	return k
}

// parallelUnary runs f over d and s in parallel chunks.
func parallelUnary[T any](threads *Threads, d, s []T, f func(d, s []T, p *unaryParams), p *unaryParams) {
	threads.For(len(d), parallelGrain, func(lo, hi int) { f(d[lo:hi], s[lo:hi], p) })
}

// intUnary runs the integer variant op of a unary kernel on x.
func intUnary(c *Call, op intUnaryOp, x *graph.Tensor, p *unaryParams) error {
	y := c.Output(0, x.DType, x.Shape)
	switch x.DType {
	case graph.Int8:
		intUnaryTyped(op, graph.View[int8](y), graph.View[int8](x), p)
	case graph.Int16:
		intUnaryTyped(op, graph.View[int16](y), graph.View[int16](x), p)
	case graph.Int32:
		intUnaryTyped(op, graph.View[int32](y), graph.View[int32](x), p)
	case graph.Int64:
		intUnaryTyped(op, graph.View[int64](y), graph.View[int64](x), p)
	case graph.Uint8:
		intUnaryTyped(op, y.Data, x.Data, p)
	case graph.Uint16:
		intUnaryTyped(op, graph.View[uint16](y), graph.View[uint16](x), p)
	case graph.Uint32:
		intUnaryTyped(op, graph.View[uint32](y), graph.View[uint32](x), p)
	case graph.Uint64:
		intUnaryTyped(op, graph.View[uint64](y), graph.View[uint64](x), p)
	default:
		return c.Unsupported("element type %s", x.DType)
	}
	return nil
}

// intUnaryTyped applies the integer variant op to s into d.
func intUnaryTyped[T integer](op intUnaryOp, d, s []T, p *unaryParams) {
	s = s[:len(d)]
	switch op {
	case intAbs:
		for i, v := range s {
			if v < 0 {
				v = -v
			}
			d[i] = v
		}
	case intNeg:
		for i, v := range s {
			d[i] = -v
		}
	case intSign:
		for i, v := range s {
			d[i] = 0
			switch {
			case v > 0:
				d[i] = 1
			case v < 0:
				d[i] = ^T(0)
			}
		}
	case intRelu:
		for i, v := range s {
			d[i] = max(v, 0)
		}
	case intShrink:
		l, b := p.alpha, p.beta
		for i, v := range s {
			f := float64(v)
			switch {
			case f < -l:
				d[i] = T(f + b)
			case f > l:
				d[i] = T(f - b)
			default:
				d[i] = 0
			}
		}
	case intBitNot:
		for i, v := range s {
			d[i] = ^v
		}
	}
}

// typeLimits returns the lowest and highest values of T: -Inf and +Inf for
// float types.
func typeLimits[T realNumber]() (lo, hi T) {
	if !isIntegerType[T]() {
		inf := math.Inf(1)
		return T(-inf), T(inf)
	}
	var z T
	bits := uint(unsafe.Sizeof(z)) * 8
	if m := z - 1; m > 0 {
		return 0, m
	}
	top := T(uint64(1)<<(bits-1) - 1)
	return -top - 1, top
}

// The float loops below apply the function their name gives to each
// element of s, computing float32 inputs in float64.

func absLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Abs(float64(v)))
	}
}

func negLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = -v
	}
}

// signLoop gives -1, 0 or 1; NaN stays NaN.
func signLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		switch {
		case v > 0:
			d[i] = 1
		case v < 0:
			d[i] = -1
		default:
			d[i] = v
		}
	}
}

func expLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Exp(float64(v)))
	}
}

func logLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Log(float64(v)))
	}
}

func sqrtLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Sqrt(float64(v)))
	}
}

func reciprocalLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = 1 / v
	}
}

func floorLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Floor(float64(v)))
	}
}

func ceilLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Ceil(float64(v)))
	}
}

// roundLoop rounds half to even.
func roundLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.RoundToEven(float64(v)))
	}
}

func sinLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Sin(float64(v)))
	}
}

func cosLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Cos(float64(v)))
	}
}

func tanLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Tan(float64(v)))
	}
}

func asinLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Asin(float64(v)))
	}
}

func acosLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Acos(float64(v)))
	}
}

func atanLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Atan(float64(v)))
	}
}

func sinhLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Sinh(float64(v)))
	}
}

func coshLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Cosh(float64(v)))
	}
}

func asinhLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Asinh(float64(v)))
	}
}

func acoshLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Acosh(float64(v)))
	}
}

func atanhLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Atanh(float64(v)))
	}
}

func erfLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Erf(float64(v)))
	}
}

// isNaNKernel is IsNaN: a bool tensor, true where the input is NaN.
func isNaNKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if isHalf(x.DType) {
		return viaFloat32(c, x.DType, isNaNKernel)
	}
	y := graph.View[bool](c.Output(0, graph.Bool, x.Shape))
	switch x.DType {
	case graph.Float:
		for i, v := range graph.View[float32](x) {
			y[i] = v != v
		}
	case graph.Double:
		for i, v := range graph.View[float64](x) {
			y[i] = v != v
		}
	default:
		return c.Unsupported("element type %s", x.DType)
	}
	return nil
}

// isInfKernel is IsInf: a bool tensor, true where the input is +Inf (when
// detect_positive, default 1) or -Inf (when detect_negative, default 1).
func isInfKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if isHalf(x.DType) {
		return viaFloat32(c, x.DType, isInfKernel)
	}
	sign := 0
	p := ops.Params[ops.IsInfParams](c.Node, c.Opset)
	pos, neg := p.DetectPositive != 0, p.DetectNegative != 0
	switch {
	case pos && !neg:
		sign = 1
	case neg && !pos:
		sign = -1
	}
	y := graph.View[bool](c.Output(0, graph.Bool, x.Shape))
	if !pos && !neg {
		return nil
	}
	switch x.DType {
	case graph.Float:
		for i, v := range graph.View[float32](x) {
			y[i] = math.IsInf(float64(v), sign)
		}
	case graph.Double:
		for i, v := range graph.View[float64](x) {
			y[i] = math.IsInf(v, sign)
		}
	default:
		return c.Unsupported("element type %s", x.DType)
	}
	return nil
}

// identityKernel is Identity: a tensor is a view sharing the input's
// storage, as kernels never modify their inputs (the executor copies one
// that shares an arena slot the output does not own); sequences and
// optionals (Identity-14+) pass through unchanged.
func identityKernel(c *Call) error {
	if len(c.In) == 0 || c.In[0] == nil {
		return c.Errorf("missing input")
	}
	if x, ok := c.In[0].(*graph.Tensor); ok {
		c.Out[0] = &graph.Tensor{DType: x.DType, Shape: x.Shape, Data: x.Data, Strings: x.Strings}
		return nil
	}
	c.Out[0] = c.In[0]
	return nil
}
