package hostfallback

import (
	"cmp"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

func init() {
	for name, op := range map[string]compareOp{
		"Equal": cmpEq, "Less": cmpLt, "LessOrEqual": cmpLe, "Greater": cmpGt, "GreaterOrEqual": cmpGe,
	} {
		RegisterChecked(name, compareKernel(op), Support{In: []Types{op.types()}})
	}
	for name, op := range map[string]binaryOp{"And": opBitAnd, "Or": opBitOr, "Xor": opBitXor} {
		Register(name, logicalKernel(op))
	}
	Register("Not", notKernel)
	Register("Where", whereKernel)
}

// compareOp names a comparison.
type compareOp uint8

const (
	cmpEq compareOp = iota
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

// swap is the mode with the two inputs' roles exchanged.
func (m runMode) swap() runMode {
	switch m {
	case runVS:
		return runSV
	case runSV:
		return runVS
	}
	return runVV
}

// types returns the element types compareKernel compares under op: the
// floats and integers, and bool and string for Equal.
func (op compareOp) types() Types {
	ts := append(slices.Clone(floats), ints...)
	if op == cmpEq {
		ts = append(ts, graph.Bool, graph.String)
	}
	return ts
}

// compareKernel is Equal, Less, LessOrEqual, Greater or GreaterOrEqual (all
// versions): a bool tensor of the broadcast shape. Equal also compares bool
// and string tensors. Comparisons with NaN are false.
func compareKernel(op compareOp) Kernel {
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
		y := graph.View[bool](c.Output(0, graph.Bool, out))
		switch a.DType {
		case graph.Float:
			compareTyped(c.Threads, op, p, y, graph.View[float32](a), graph.View[float32](b))
		case graph.Double:
			compareTyped(c.Threads, op, p, y, graph.View[float64](a), graph.View[float64](b))
		case graph.Int8:
			compareTyped(c.Threads, op, p, y, graph.View[int8](a), graph.View[int8](b))
		case graph.Int16:
			compareTyped(c.Threads, op, p, y, graph.View[int16](a), graph.View[int16](b))
		case graph.Int32:
			compareTyped(c.Threads, op, p, y, graph.View[int32](a), graph.View[int32](b))
		case graph.Int64:
			compareTyped(c.Threads, op, p, y, graph.View[int64](a), graph.View[int64](b))
		case graph.Uint8:
			compareTyped(c.Threads, op, p, y, a.Data, b.Data)
		case graph.Uint16:
			compareTyped(c.Threads, op, p, y, graph.View[uint16](a), graph.View[uint16](b))
		case graph.Uint32:
			compareTyped(c.Threads, op, p, y, graph.View[uint32](a), graph.View[uint32](b))
		case graph.Uint64:
			compareTyped(c.Threads, op, p, y, graph.View[uint64](a), graph.View[uint64](b))
		case graph.Bool: // Equal only (op.types)
			binaryLoop(c.Threads, p, y, a.Data, b.Data, eqLoop[uint8])
		case graph.String: // Equal only (op.types)
			binaryLoop(c.Threads, p, y, a.Strings, b.Strings, eqLoop[string])
		default:
			return c.Unsupported("element type %s", a.DType)
		}
		return nil
	}
	return k
}

// compareTyped computes the comparison op of a and b into d over p.
func compareTyped[T cmp.Ordered](threads *Threads, op compareOp, p *broadcastPlan, d []bool, a, b []T) {
	var k func(d []bool, a, b []T, m runMode)
	switch op {
	case cmpEq:
		k = eqLoop[T]
	case cmpLt:
		k = ltLoop[T]
	case cmpLe:
		k = leLoop[T]
	case cmpGt:
		k = gtLoop[T]
	default:
		k = geLoop[T]
	}
	binaryLoop(threads, p, d, a, b, k)
}

// eqLoop is a == b over one run.
func eqLoop[T comparable](d []bool, a, b []T, m runMode) {
	if m == runSV {
		a, b = b, a
	}
	a = a[:len(d)]
	if m == runVV {
		b = b[:len(d)]
		for i := range d {
			d[i] = a[i] == b[i]
		}
		return
	}
	y := b[0]
	for i := range d {
		d[i] = a[i] == y
	}
}

// ltLoop is a < b over one run.
func ltLoop[T cmp.Ordered](d []bool, a, b []T, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] < b[i]
		}
	case runVS:
		a, y := a[:len(d)], b[0]
		for i := range d {
			d[i] = a[i] < y
		}
	default:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x < b[i]
		}
	}
}

// leLoop is a <= b over one run.
func leLoop[T cmp.Ordered](d []bool, a, b []T, m runMode) {
	switch m {
	case runVV:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] <= b[i]
		}
	case runVS:
		a, y := a[:len(d)], b[0]
		for i := range d {
			d[i] = a[i] <= y
		}
	default:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x <= b[i]
		}
	}
}

// gtLoop is a > b over one run.
func gtLoop[T cmp.Ordered](d []bool, a, b []T, m runMode) { ltLoop(d, b, a, m.swap()) }

// geLoop is a >= b over one run.
func geLoop[T cmp.Ordered](d []bool, a, b []T, m runMode) { leLoop(d, b, a, m.swap()) }

// logicalKernel is And, Or or Xor (all versions) over bool tensors.
func logicalKernel(op binaryOp) Kernel {
	return func(c *Call) error {
		a, b, out, p, err := binaryOperands(c)
		if err != nil {
			return err
		}
		if a.DType != graph.Bool || b.DType != graph.Bool {
			return c.Errorf("inputs must be bool, not %s and %s", a.DType, b.DType)
		}
		y := c.Output(0, graph.Bool, out)
		switch op {
		case opBitAnd:
			binaryLoop(c.Threads, p, y.Data, a.Data, b.Data, bitAndLoop[uint8])
		case opBitOr:
			binaryLoop(c.Threads, p, y.Data, a.Data, b.Data, bitOrLoop[uint8])
		default:
			binaryLoop(c.Threads, p, y.Data, a.Data, b.Data, bitXorLoop[uint8])
		}
		return nil
	}
}

// notKernel is Not: logical negation of a bool tensor.
func notKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if x.DType != graph.Bool {
		return c.Errorf("input must be bool, not %s", x.DType)
	}
	y := c.Output(0, graph.Bool, x.Shape).Data
	for i, v := range x.Data {
		y[i] = 0
		if v == 0 {
			y[i] = 1
		}
	}
	return nil
}

// whereKernel is Where (all versions): condition ? X : Y with the three
// inputs broadcast together, for elements of any type.
func whereKernel(c *Call) error {
	var in [3]*graph.Tensor
	for i := range in {
		t, err := inputTensor(c, i)
		if err != nil {
			return err
		}
		in[i] = t
	}
	cond, x, y := in[0], in[1], in[2]
	if cond.DType != graph.Bool {
		return c.Errorf("condition must be bool, not %s", cond.DType)
	}
	if err := sameType(c, x, y); err != nil {
		return err
	}
	out, err := broadcastShapes(cond.Shape, x.Shape, y.Shape)
	if err != nil {
		return c.Errorf("%w", err)
	}
	p, err := newBroadcastPlan(out, cond.Shape, x.Shape, y.Shape)
	if err != nil {
		return c.Errorf("%w", err)
	}
	d := c.Output(0, x.DType, out)
	if x.DType == graph.String {
		whereTyped(c.Threads, p, d.Strings, cond.Data, x.Strings, y.Strings)
		return nil
	}
	switch x.DType.Bits() {
	case 8:
		whereTyped(c.Threads, p, d.Data, cond.Data, x.Data, y.Data)
	case 16:
		whereTyped(c.Threads, p, graph.View[uint16](d), cond.Data, graph.View[uint16](x), graph.View[uint16](y))
	case 32:
		whereTyped(c.Threads, p, graph.View[uint32](d), cond.Data, graph.View[uint32](x), graph.View[uint32](y))
	case 64:
		whereTyped(c.Threads, p, graph.View[uint64](d), cond.Data, graph.View[uint64](x), graph.View[uint64](y))
	case 128:
		whereTyped(c.Threads, p, graph.View[complex128](d), cond.Data, graph.View[complex128](x), graph.View[complex128](y))
	default:
		return c.Unsupported("element type %s", x.DType)
	}
	return nil
}

// whereTyped selects x or y by cond into d over the three-input plan p.
func whereTyped[T any](threads *Threads, p *broadcastPlan, d []T, cond []byte, x, y []T) {
	var s [maxBroadcastInputs]int
	for k := range s {
		if p.unit[k] {
			s[k] = 1
		}
	}
	p.forEach(threads, func(o int, in *[maxBroadcastInputs]int, n int) {
		d := d[o : o+n]
		c, x, y := cond[in[0]:], x[in[1]:], y[in[2]:]
		if s == [maxBroadcastInputs]int{1, 1, 1} {
			c, x, y = c[:n], x[:n], y[:n]
			for i := range d {
				if c[i] != 0 {
					d[i] = x[i]
				} else {
					d[i] = y[i]
				}
			}
			return
		}
		for i := range d {
			if c[i*s[0]] != 0 {
				d[i] = x[i*s[1]]
			} else {
				d[i] = y[i*s[2]]
			}
		}
	})
}
