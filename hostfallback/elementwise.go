package hostfallback

import (
	"errors"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	for name, op := range map[string]binaryOp{
		"Add": opAdd, "Sub": opSub, "Mul": opMul, "Div": opDiv,
	} {
		Register(name, arithKernel(op))
	}
	for name, op := range map[string]binaryOp{
		"BitwiseAnd": opBitAnd, "BitwiseOr": opBitOr, "BitwiseXor": opBitXor,
	} {
		Register(name, bitwiseKernel(op))
	}
	Register("Max", variadicKernel(opMax))
	Register("Min", variadicKernel(opMin))
	Register("Sum", variadicKernel(opAdd))
	Register("Mean", variadicKernel(opMean))
	Register("Pow", powKernel)
	Register("Mod", modKernel)
	Register("BitShift", bitShiftKernel)
	Register("PRelu", preluKernel)
}

// binaryOp names the operation of a two-input elementwise kernel.
type binaryOp uint8

const (
	opAdd binaryOp = iota
	opSub
	opMul
	opDiv
	opMax
	opMin
	opMean // Sum, then divided by the number of inputs
	opPRelu
	opBitAnd
	opBitOr
	opBitXor
	opShl
	opShr
	opMod  // remainder with the divisor's sign
	opFMod // remainder with the dividend's sign
)

// binaryOperands returns the two input tensors of a broadcasting binary
// node, the output shape, and the broadcast plan (with the legacy
// broadcast of opsets before 7).
func binaryOperands(c *Call) (a, b *graph.Tensor, out []int64, p *broadcastPlan, err error) {
	if a, err = inputTensor(c, 0); err != nil {
		return
	}
	if b, err = inputTensor(c, 1); err != nil {
		return
	}
	bp, err := Memo(c, c.ShapeKey(), func() (*binaryPlan, error) {
		out, bShape, err := binaryShapes(c, a.Shape, b.Shape)
		if err != nil {
			return nil, err
		}
		p, err := newBroadcastPlan(out, a.Shape, bShape)
		if err != nil {
			return nil, c.Errorf("%w", err)
		}
		return &binaryPlan{out, p}, nil
	})
	if err != nil {
		return
	}
	return a, b, bp.out, bp.p, nil
}

// binaryPlan is a binary node's output shape and broadcast plan.
type binaryPlan struct {
	out []int64
	p   *broadcastPlan
}

// sameType fails unless a and b have the same element type.
func sameType(c *Call, a, b *graph.Tensor) error {
	if a.DType != b.DType {
		return c.Errorf("input types differ: %s and %s", a.DType, b.DType)
	}
	return nil
}

// arithKernel is Add, Sub, Mul or Div (all versions) over every real
// numeric type; integer division truncates toward zero and fails on a zero
// divisor.
func arithKernel(op binaryOp) Kernel {
	var k Kernel
	k = func(c *Call) error {
		a, b, out, p, err := binaryOperands(c)
		if err != nil {
			return err
		}
		if err := sameType(c, a, b); err != nil {
			return err
		}
		if isHalf(a.DType) {
			return viaFloat32(c, a.DType, k)
		}
		return arith(c, op, p, c.OutputUninit(0, a.DType, out), a, b)
	}
	return k
}

// arith computes y = a op b over the broadcast p for an arithmetic op
// (Add, Sub, Mul, Div, Max, Min, PRelu) of any real numeric type.
func arith(c *Call, op binaryOp, p *broadcastPlan, y, a, b *graph.Tensor) error {
	switch a.DType {
	case graph.Float:
		return arithTyped[float32](c, op, p, y, a, b)
	case graph.Double:
		return arithTyped[float64](c, op, p, y, a, b)
	case graph.Int8:
		return arithTyped[int8](c, op, p, y, a, b)
	case graph.Int16:
		return arithTyped[int16](c, op, p, y, a, b)
	case graph.Int32:
		return arithTyped[int32](c, op, p, y, a, b)
	case graph.Int64:
		return arithTyped[int64](c, op, p, y, a, b)
	case graph.Uint8:
		return arithTyped[uint8](c, op, p, y, a, b)
	case graph.Uint16:
		return arithTyped[uint16](c, op, p, y, a, b)
	case graph.Uint32:
		return arithTyped[uint32](c, op, p, y, a, b)
	case graph.Uint64:
		return arithTyped[uint64](c, op, p, y, a, b)
	}
	return c.Unsupported("element type %s", a.DType)
}

// isIntegerType reports whether T is an integer type.
func isIntegerType[T realNumber]() bool {
	var one T = 1
	return one/2 == 0
}

// arithTyped is arith for element type T.
func arithTyped[T realNumber](c *Call, op binaryOp, p *broadcastPlan, y, a, b *graph.Tensor) error {
	z := graph.View[T](b)[:b.NumElements()]
	var k func(d, a, b []T, m runMode)
	switch op {
	case opAdd:
		k = addLoop[T]
		if f, ok := any(func(d, a, b []float32, m runMode) { arithF32(d, a, b, m, false) }).(func(d, a, b []T, m runMode)); ok {
			k = f
		}
	case opSub:
		k = subLoop[T]
	case opMul:
		k = mulLoop[T]
		if f, ok := any(func(d, a, b []float32, m runMode) { arithF32(d, a, b, m, true) }).(func(d, a, b []T, m runMode)); ok {
			k = f
		}
	case opDiv:
		if isIntegerType[T]() && p.n > 0 && slices.Contains(z, 0) {
			return c.Errorf("integer division by zero")
		}
		k = divLoop[T]
	case opMax:
		k = maxLoop[T]
	case opMin:
		k = minLoop[T]
	case opPRelu:
		k = preluLoop[T]
	default:
		return c.Unsupported("operation %d", op)
	}
	if op == opAdd || op == opMul {
		if v, ok := p.rowScalar(); ok {
			if d, ok := any(graph.View[T](y)).([]float32); ok {
				in := [2][]float32{any(graph.View[T](a)).([]float32), any(z).([]float32)}
				rowsF32(c.Threads, d, in[v][:p.n], in[1-v][:p.dims[0]], p.dims[1], op == opMul)
				return nil
			}
		}
	}
	binaryLoop(c.Threads, p, graph.View[T](y), graph.View[T](a), z, k)
	return nil
}

// rowsF32 is arithRows over the workers, whole rows a chunk.
func rowsF32(threads *Threads, d, a, s []float32, n int, mul bool) {
	threads.For(len(s), max(parallelGrain/n, 1), func(r0, r1 int) {
		arithRows(d[r0*n:r1*n], a[r0*n:r1*n], s[r0:r1], n, mul)
	})
}

// arithRowsGo is the portable arithRows.
func arithRowsGo(d, a, s []float32, n int, mul bool) {
	for r, v := range s {
		dr, ar := d[r*n:(r+1)*n], a[r*n:(r+1)*n]
		for i, x := range ar {
			if mul {
				dr[i] = x * v
			} else {
				dr[i] = x + v
			}
		}
	}
}

// addLoop is a + b over one run.
func addLoop[T realNumber](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = a[i] + b[i]
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = a[i] + y
	}
}

// subLoop is a - b over one run.
func subLoop[T realNumber](d, a, b []T, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] - b[i]
		}
	case runVS:
		a, y := a[:len(d)], b[0]
		for i := range d {
			d[i] = a[i] - y
		}
	default:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x - b[i]
		}
	}
}

// mulLoop is a * b over one run.
func mulLoop[T realNumber](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = a[i] * b[i]
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = a[i] * y
	}
}

// divLoop is a / b over one run; integer divisors are non-zero.
func divLoop[T realNumber](d, a, b []T, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] / b[i]
		}
	case runVS:
		a, y := a[:len(d)], b[0]
		for i := range d {
			d[i] = a[i] / y
		}
	default:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x / b[i]
		}
	}
}

// maxLoop is elementwise max; a NaN operand gives NaN.
func maxLoop[T realNumber](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = max(a[i], b[i])
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = max(a[i], y)
	}
}

// minLoop is elementwise min; a NaN operand gives NaN.
func minLoop[T realNumber](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = min(a[i], b[i])
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = min(a[i], y)
	}
}

// preluLoop is x < 0 ? x*slope : x with x from a and slope from b (not
// max(x,0) + slope*min(x,0), which is NaN for x > 0 and a NaN or infinite
// slope).
func preluLoop[T realNumber](d, a, b []T, m runMode) {
	prelu := func(x, s T) T {
		if x < 0 {
			return x * s
		}
		return x
	}
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i, x := range a {
			d[i] = prelu(x, b[i])
		}
	case runVS:
		s := b[0]
		for i, x := range a[:len(d)] {
			d[i] = prelu(x, s)
		}
	default:
		x := a[0]
		for i, s := range b[:len(d)] {
			d[i] = prelu(x, s)
		}
	}
}

// variadicKernel is Max, Min, Sum or Mean (all versions): the inputs
// broadcast together (opsets before 8 require equal shapes, a special case)
// and combine left to right. Mean is for float types only.
func variadicKernel(op binaryOp) Kernel {
	var k Kernel
	k = func(c *Call) error {
		var ins []*graph.Tensor
		var shapes [][]int64
		for i := range c.In {
			t, err := inputTensor(c, i)
			if err != nil {
				return err
			}
			if err := sameType(c, c.Tensor(0), t); err != nil {
				return err
			}
			ins = append(ins, t)
			shapes = append(shapes, t.Shape)
		}
		if len(ins) == 0 {
			return c.Errorf("no inputs")
		}
		dt := ins[0].DType
		if isHalf(dt) {
			return viaFloat32(c, dt, k)
		}
		if op == opMean && dt != graph.Float && dt != graph.Double {
			return c.Unsupported("element type %s", dt)
		}
		out, err := broadcastShapes(shapes...)
		if err != nil {
			return c.Errorf("%w", err)
		}
		y := c.Output(0, dt, out)
		if len(ins) == 1 {
			copyTensor(y, ins[0])
			return nil
		}
		step := op
		if op == opMean {
			step = opAdd
		}
		acc := ins[0]
		for i, t := range ins[1:] {
			dst := y
			s, _ := broadcastShapes(acc.Shape, t.Shape)
			if i < len(ins)-2 {
				dst = graph.NewTensor(dt, s)
			}
			p, err := newBroadcastPlan(s, acc.Shape, t.Shape)
			if err != nil {
				return c.Errorf("%w", err)
			}
			if err := arith(c, step, p, dst, acc, t); err != nil {
				return err
			}
			acc = dst
		}
		if op == opMean {
			if dt == graph.Float {
				scaleFloats(graph.View[float32](y), len(ins))
			} else {
				scaleFloats(graph.View[float64](y), len(ins))
			}
		}
		return nil
	}
	return k
}

// scaleFloats divides every element of d by n.
func scaleFloats[T floating](d []T, n int) {
	for i := range d {
		d[i] /= T(n)
	}
}

// preluKernel is PRelu (all versions): x < 0 ? x*slope : x, with slope
// broadcast to x's shape.
func preluKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	slope, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	if err := sameType(c, x, slope); err != nil {
		return err
	}
	if isHalf(x.DType) {
		return viaFloat32(c, x.DType, preluKernel)
	}
	// Before opset 7 a 1-D slope of the channel count applies along axis 1.
	if c.Opset < 7 && slope.Rank() == 1 && x.Rank() > 2 && slope.Shape[0] == x.Shape[1] {
		shape := make([]int64, x.Rank()-1)
		for i := range shape {
			shape[i] = 1
		}
		shape[0] = slope.Shape[0]
		slope = &graph.Tensor{DType: slope.DType, Shape: shape, Data: slope.Data}
	}
	p, err := newBroadcastPlan(x.Shape, x.Shape, slope.Shape)
	if err != nil {
		return c.Errorf("slope: %w", err)
	}
	return arith(c, opPRelu, p, c.Output(0, x.DType, x.Shape), x, slope)
}

// powKernel is Pow (all versions). The exponent may have any numeric type:
// it is converted to the base's type for float bases; integer bases raise
// to integer exponents exactly (x^-n is 0 unless |x| is 1) and to float
// exponents in float64, truncating the result.
func powKernel(c *Call) error {
	a, b, out, p, err := binaryOperands(c)
	if err != nil {
		return err
	}
	if isHalf(a.DType) {
		return viaFloat32(c, a.DType, powKernel)
	}
	var edt graph.DType
	switch {
	case a.DType == graph.Float || a.DType == graph.Double:
		edt = a.DType
	case a.DType == graph.Int32 || a.DType == graph.Int64:
		edt = graph.Int64
		if b.DType.IsFloat() {
			edt = graph.Double
		}
	default:
		return c.Unsupported("base type %s", a.DType)
	}
	e := b
	if b.DType != edt {
		e = graph.NewTensor(edt, b.Shape)
		if err := castTensor(c.Threads, e, b, castOptions{saturate: true}); err != nil {
			return c.Errorf("exponent: %w", err)
		}
	}
	y := c.Output(0, a.DType, out)
	switch {
	case a.DType == graph.Float:
		binaryLoop(c.Threads, p, graph.View[float32](y), graph.View[float32](a), graph.View[float32](e), powLoop[float32])
	case a.DType == graph.Double:
		binaryLoop(c.Threads, p, graph.View[float64](y), graph.View[float64](a), graph.View[float64](e), powLoop[float64])
	case a.DType == graph.Int32 && edt == graph.Int64:
		binaryLoop(c.Threads, p, graph.View[int32](y), graph.View[int32](a), graph.View[int64](e), intPowLoop[int32])
	case a.DType == graph.Int64 && edt == graph.Int64:
		binaryLoop(c.Threads, p, graph.View[int64](y), graph.View[int64](a), graph.View[int64](e), intPowLoop[int64])
	case a.DType == graph.Int32:
		binaryLoop(c.Threads, p, graph.View[int32](y), graph.View[int32](a), graph.View[float64](e), intFloatPowLoop[int32])
	default:
		binaryLoop(c.Threads, p, graph.View[int64](y), graph.View[int64](a), graph.View[float64](e), intFloatPowLoop[int64])
	}
	return nil
}

// powLoop is a^b, with fast paths for a scalar exponent of 1, 2 or 3.
func powLoop[T floating](d, a, b []T, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = T(math.Pow(float64(a[i]), float64(b[i])))
		}
	case runVS:
		a := a[:len(d)]
		switch e := b[0]; e {
		case 1:
			copy(d, a)
		case 2:
			for i, x := range a {
				d[i] = x * x
			}
		case 3:
			for i, x := range a {
				f := float64(x)
				d[i] = T(f * f * f)
			}
		default:
			for i, x := range a {
				d[i] = T(math.Pow(float64(x), float64(e)))
			}
		}
	default:
		x := float64(a[0])
		for i, e := range b[:len(d)] {
			d[i] = T(math.Pow(x, float64(e)))
		}
	}
}

// intPow is x^e in int64 arithmetic (wrapping on overflow); a negative
// exponent gives the truncated quotient 1/x^-e.
func intPow(x, e int64) int64 {
	if e < 0 {
		switch {
		case x == 1:
			return 1
		case x == -1 && e&1 == 0:
			return 1
		case x == -1:
			return -1
		}
		return 0
	}
	r := int64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r *= x
		}
		x *= x
	}
	return r
}

// intPowLoop raises integer bases to int64 exponents over one run.
func intPowLoop[T signedInt](d, a []T, b []int64, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = T(intPow(int64(a[i]), b[i]))
		}
	case runVS:
		e := b[0]
		for i, x := range a[:len(d)] {
			d[i] = T(intPow(int64(x), e))
		}
	default:
		x := int64(a[0])
		for i, e := range b[:len(d)] {
			d[i] = T(intPow(x, e))
		}
	}
}

// intFloatPowLoop raises integer bases to float64 exponents over one
// run, truncating the results.
func intFloatPowLoop[T signedInt](d, a []T, b []float64, m runMode) {
	sa, sb := 1, 1
	switch m {
	case runVS:
		sb = 0
	case runSV:
		sa = 0
	}
	for i := range d {
		d[i] = T(math.Pow(float64(a[i*sa]), b[i*sb]))
	}
}

// modKernel is Mod (all versions). With fmod=0, integer results take the
// divisor's sign (Python's %); with fmod=1 they take the dividend's (C's
// fmod), which float types require. A zero integer divisor is an error.
func modKernel(c *Call) error {
	a, b, out, p, err := binaryOperands(c)
	if err != nil {
		return err
	}
	if err := sameType(c, a, b); err != nil {
		return err
	}
	if isHalf(a.DType) {
		return viaFloat32(c, a.DType, modKernel)
	}
	fmod := ops.Params[ops.ModParams](c.Node, c.Opset).Fmod != 0
	if a.DType.IsFloat() && !fmod {
		return c.Errorf("fmod must be 1 for %s inputs", a.DType)
	}
	y := c.Output(0, a.DType, out)
	switch a.DType {
	case graph.Float:
		binaryLoop(c.Threads, p, graph.View[float32](y), graph.View[float32](a), graph.View[float32](b), floatModLoop[float32])
		return nil
	case graph.Double:
		binaryLoop(c.Threads, p, graph.View[float64](y), graph.View[float64](a), graph.View[float64](b), floatModLoop[float64])
		return nil
	}
	op := opMod
	if fmod {
		op = opFMod
	}
	return intBinary(c, op, p, y, a, b)
}

// floatModLoop is C's fmod over one run.
func floatModLoop[T floating](d, a, b []T, m runMode) {
	sa, sb := 1, 1
	switch m {
	case runVS:
		sb = 0
	case runSV:
		sa = 0
	}
	for i := range d {
		d[i] = T(math.Mod(float64(a[i*sa]), float64(b[i*sb])))
	}
}

// bitwiseKernel is BitwiseAnd, BitwiseOr or BitwiseXor over the integer
// types.
func bitwiseKernel(op binaryOp) Kernel {
	return func(c *Call) error {
		a, b, out, p, err := binaryOperands(c)
		if err != nil {
			return err
		}
		if err := sameType(c, a, b); err != nil {
			return err
		}
		return intBinary(c, op, p, c.Output(0, a.DType, out), a, b)
	}
}

// bitShiftKernel is BitShift: direction LEFT or RIGHT over the unsigned
// integer types; shifting by the type's width or more gives 0.
func bitShiftKernel(c *Call) error {
	a, b, out, p, err := binaryOperands(c)
	if err != nil {
		return err
	}
	if err := sameType(c, a, b); err != nil {
		return err
	}
	if a.DType.IsSigned() {
		return c.Unsupported("element type %s", a.DType)
	}
	var op binaryOp
	switch dir := ops.Params[ops.BitShiftParams](c.Node, c.Opset).Direction; dir {
	case "LEFT":
		op = opShl
	case "RIGHT":
		op = opShr
	default:
		return c.Errorf("direction must be LEFT or RIGHT, not %q", dir)
	}
	return intBinary(c, op, p, c.Output(0, a.DType, out), a, b)
}

// intBinary computes y = a op b over the broadcast p for an integer-only
// op (Mod, the bitwise ops and shifts).
func intBinary(c *Call, op binaryOp, p *broadcastPlan, y, a, b *graph.Tensor) error {
	var err error
	switch a.DType {
	case graph.Int8:
		err = intTyped[int8](c.Threads, op, p, y, a, b)
	case graph.Int16:
		err = intTyped[int16](c.Threads, op, p, y, a, b)
	case graph.Int32:
		err = intTyped[int32](c.Threads, op, p, y, a, b)
	case graph.Int64:
		err = intTyped[int64](c.Threads, op, p, y, a, b)
	case graph.Uint8:
		err = intTyped[uint8](c.Threads, op, p, y, a, b)
	case graph.Uint16:
		err = intTyped[uint16](c.Threads, op, p, y, a, b)
	case graph.Uint32:
		err = intTyped[uint32](c.Threads, op, p, y, a, b)
	case graph.Uint64:
		err = intTyped[uint64](c.Threads, op, p, y, a, b)
	default:
		return c.Unsupported("element type %s", a.DType)
	}
	if err != nil {
		return c.Errorf("%w", err)
	}
	return nil
}

// errDivZero reports an integer division or modulo by zero.
var errDivZero = errors.New("integer division by zero")

// intTyped is intBinary for element type T; it fails with errDivZero
// on a zero modulo divisor.
func intTyped[T integer](threads *Threads, op binaryOp, p *broadcastPlan, y, a, b *graph.Tensor) error {
	z := graph.View[T](b)[:b.NumElements()]
	var k func(d, a, b []T, m runMode)
	switch op {
	case opMod, opFMod:
		if p.n > 0 && slices.Contains(z, 0) {
			return errDivZero
		}
		k = modLoop[T]
		if op == opFMod {
			k = fmodLoop[T]
		}
	case opBitAnd:
		k = bitAndLoop[T]
	case opBitOr:
		k = bitOrLoop[T]
	case opBitXor:
		k = bitXorLoop[T]
	case opShl:
		k = shlLoop[T]
	default:
		k = shrLoop[T]
	}
	binaryLoop(threads, p, graph.View[T](y), graph.View[T](a), z, k)
	return nil
}

// modLoop is the remainder with the divisor's sign.
func modLoop[T integer](d, a, b []T, m runMode) {
	sa, sb := 1, 1
	switch m {
	case runVS:
		sb = 0
	case runSV:
		sa = 0
	}
	for i := range d {
		x, y := a[i*sa], b[i*sb]
		r := x % y
		if r != 0 && (r < 0) != (y < 0) {
			r += y
		}
		d[i] = r
	}
}

// fmodLoop is the remainder with the dividend's sign.
func fmodLoop[T integer](d, a, b []T, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] % b[i]
		}
	case runVS:
		y := b[0]
		for i, x := range a[:len(d)] {
			d[i] = x % y
		}
	default:
		x := a[0]
		for i, y := range b[:len(d)] {
			d[i] = x % y
		}
	}
}

// bitAndLoop is a & b over one run.
func bitAndLoop[T integer](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = a[i] & b[i]
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = a[i] & y
	}
}

// bitOrLoop is a | b over one run.
func bitOrLoop[T integer](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = a[i] | b[i]
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = a[i] | y
	}
}

// bitXorLoop is a ^ b over one run.
func bitXorLoop[T integer](d, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = a[i] ^ b[i]
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = a[i] ^ y
	}
}

// shlLoop shifts left; a shift count is read as unsigned, so counts past
// the width give 0.
func shlLoop[T integer](d, a, b []T, m runMode) {
	sa, sb := 1, 1
	switch m {
	case runVS:
		sb = 0
	case runSV:
		sa = 0
	}
	for i := range d {
		d[i] = a[i*sa] << uint64(b[i*sb])
	}
}

// shrLoop shifts right; a shift count is read as unsigned.
func shrLoop[T integer](d, a, b []T, m runMode) {
	sa, sb := 1, 1
	switch m {
	case runVS:
		sb = 0
	case runSV:
		sa = 0
	}
	for i := range d {
		d[i] = a[i*sa] >> uint64(b[i*sb])
	}
}
