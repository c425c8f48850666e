package ops

import (
	"fmt"
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// Elementwise ops: unary maps, binary and variadic ops with numpy
// broadcasting, comparisons and logic with bool outputs, Where, Cast, Clip.

func init() {
	// Swish(x) = x·Sigmoid(alpha·x), newer than the catalog (opset 24).
	Register(&Schema{Name: "Swish", Since: 24, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defFloat("alpha", 1)}, Infer: passThrough, Tol: transcendental, Props: Elementwise})
	setRule(passThrough, "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Celu",
		"Cos", "Cosh", "Elu", "Erf", "Exp", "Gelu", "HardSigmoid", "HardSwish", "LeakyRelu", "Log",
		"Mish", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sin", "Sinh", "Softplus", "Softsign",
		"Tan", "Tanh", "ThresholdedRelu", "Clip", "ScaledTanh", "ParametricSoftplus",
		"Affine", "ImageScaler", "Crop", "MeanVarianceNormalization", "LRN", "Softmax", "LogSoftmax",
		"Hardmax")
	setRule(inferUnaryValue(unaryNeg), "Neg")
	setRule(inferUnaryValue(unaryMath(math.Floor)), "Floor")
	setRule(inferUnaryValue(unaryMath(math.Ceil)), "Ceil")
	setRule(inferUnaryValue(unaryMath(math.Sqrt)), "Sqrt")
	setRule(inferUnaryValue(unaryMath(func(v float64) float64 { return 1 / v })), "Reciprocal")
	setRule(inferUnaryValue(unarySign), "Sign")
	setRule(inferUnaryValue(unaryAbs), "Abs")
	setRule(inferUnaryValue(unaryNot), "Not")
	setRule(inferIdentity, "Identity")
	setRule(inferBool, "IsNaN", "IsInf")
	setRule(inferBinary(arithAdd), "Add")
	setRule(inferBinary(arithSub), "Sub")
	setRule(inferBinary(arithMul), "Mul")
	setRule(inferBinary(arithDiv), "Div")
	setRule(inferMod, "Mod")
	setRule(inferBinary(arithPow), "Pow")
	setRule(inferBinary(nil), "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu")
	setRule(inferCompare(func(a, b float64) bool { return a == b }, func(a, b int64) bool { return a == b }), "Equal")
	setRule(inferCompare(func(a, b float64) bool { return a < b }, func(a, b int64) bool { return a < b }), "Less")
	setRule(inferCompare(func(a, b float64) bool { return a > b }, func(a, b int64) bool { return a > b }), "Greater")
	setRule(inferCompare(func(a, b float64) bool { return a <= b }, func(a, b int64) bool { return a <= b }), "LessOrEqual")
	setRule(inferCompare(func(a, b float64) bool { return a >= b }, func(a, b int64) bool { return a >= b }), "GreaterOrEqual")
	setRule(inferCompare(nil, func(a, b int64) bool { return a != 0 && b != 0 }), "And")
	setRule(inferCompare(nil, func(a, b int64) bool { return a != 0 || b != 0 }), "Or")
	setRule(inferCompare(nil, func(a, b int64) bool { return (a != 0) != (b != 0) }), "Xor")
	setRule(inferVariadic(arithMax), "Max")
	setRule(inferVariadic(arithMin), "Min")
	setRule(inferVariadic(arithAdd), "Sum")
	setRule(inferVariadic(nil), "Mean")
	setRule(inferWhere, "Where")
	setRule(inferCast, "Cast")
	setRule(inferCastLike, "CastLike")
	setRule(inferDropout, "Dropout")

	// CastLike is not elementwise: its input 1 gives only the type and
	// does not broadcast.
	setProps(Elementwise, "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Cast",
		"Ceil", "Celu", "Clip", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish",
		"Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "Mish", "Neg", "Not", "Reciprocal", "Relu", "Round",
		"Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh",
		"ThresholdedRelu",
		"Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal", "Greater",
		"GreaterOrEqual", "Less", "LessOrEqual", "Mod", "Mul", "Or", "Pow", "PRelu", "Sub", "Where", "Xor",
		"Max", "Mean", "Min", "Sum")
	setProps(View, "Identity")
	setProps(FusableActivation, "Clip", "HardSigmoid", "HardSwish", "LeakyRelu", "Relu", "Sigmoid")
	setProps(Nondeterministic, "Dropout")
}

// inferIdentity passes the type and a known value through.
func inferIdentity(c *InferContext) error {
	c.set(0, c.in(0).Clone())
	if v := c.val(0); v != nil {
		c.setValue(0, v)
	} else {
		c.setSym(0, c.inElem(0), c.symIn(0))
	}
	return nil
}

// unaryFunc computes element k of out from element k of x.
type unaryFunc func(out, x *nvals, k int)

func unaryNeg(out, x *nvals, k int) {
	if x.isFloat() {
		out.setFloat(k, -x.f[k])
	} else {
		out.setInt(k, -x.i[k])
	}
}

func unaryAbs(out, x *nvals, k int) {
	if x.isFloat() {
		out.setFloat(k, math.Abs(x.f[k]))
	} else if x.i[k] < 0 {
		out.setInt(k, -x.i[k])
	} else {
		out.setInt(k, x.i[k])
	}
}

func unarySign(out, x *nvals, k int) {
	v := x.float(k)
	switch {
	case v > 0:
		out.setInt(k, 1)
	case v < 0:
		out.setInt(k, -1)
	case math.IsNaN(v):
		out.setFloat(k, v)
	default:
		out.setInt(k, 0)
	}
}

func unaryNot(out, x *nvals, k int) {
	if x.int(k) == 0 {
		out.setInt(k, 1)
	} else {
		out.setInt(k, 0)
	}
}

// unaryMath lifts a float function; integers pass through unchanged.
func unaryMath(f func(float64) float64) unaryFunc {
	return func(out, x *nvals, k int) {
		if x.isFloat() {
			out.setFloat(k, f(x.f[k]))
		} else {
			out.setInt(k, x.i[k])
		}
	}
}

// inferUnaryValue keeps the input's type and computes small known values.
func inferUnaryValue(f unaryFunc) InferFunc {
	return func(c *InferContext) error {
		c.set(0, c.in(0).Clone())
		if x, ok := decode(c.val(0)); ok {
			out := newVals(x.dt, x.shape)
			for k := range x.len() {
				f(out, x, k)
			}
			c.setValue(0, out.tensor())
		}
		return nil
	}
}

// inferBool gives a bool tensor of the input's shape.
func inferBool(c *InferContext) error {
	c.setTensor(0, graph.Bool, c.inShape(0).Clone())
	return nil
}

func arithAdd(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if out.isFloat() {
		out.setFloat(k, x.float(a)+y.float(b))
	} else {
		out.setInt(k, x.int(a)+y.int(b))
	}
	return true
}

func arithSub(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if out.isFloat() {
		out.setFloat(k, x.float(a)-y.float(b))
	} else {
		out.setInt(k, x.int(a)-y.int(b))
	}
	return true
}

func arithMul(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if out.isFloat() {
		out.setFloat(k, x.float(a)*y.float(b))
	} else {
		out.setInt(k, x.int(a)*y.int(b))
	}
	return true
}

func arithDiv(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if out.isFloat() {
		out.setFloat(k, x.float(a)/y.float(b))
		return true
	}
	if y.int(b) == 0 {
		return false
	}
	out.setInt(k, x.int(a)/y.int(b))
	return true
}

// arithPow computes float powers (a scale such as 1/√d that an exporter
// derives from a shape); integer ones are left to the kernels.
func arithPow(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if !out.isFloat() {
		return false
	}
	out.setFloat(k, math.Pow(x.float(a), y.float(b)))
	return true
}

func arithMax(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if out.isFloat() {
		out.setFloat(k, math.Max(x.float(a), y.float(b)))
	} else {
		out.setInt(k, max(x.int(a), y.int(b)))
	}
	return true
}

func arithMin(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
	if out.isFloat() {
		out.setFloat(k, math.Min(x.float(a), y.float(b)))
	} else {
		out.setInt(k, min(x.int(a), y.int(b)))
	}
	return true
}

// binaryShape is the output shape of a broadcasting binary op: numpy
// broadcasting from opset 7, the first input's shape before (the second
// input then broadcasts to it).
func binaryShape(c *InferContext, a, b graph.Shape) (graph.Shape, error) {
	if c.Opset < 7 && c.Node.OpType != "PRelu" {
		if a == nil {
			return nil, nil
		}
		return a.Clone(), nil
	}
	if c.Node.OpType == "PRelu" {
		return a.Clone(), nil
	}
	return broadcast(a, b)
}

// inferBinary is the rule of a broadcasting binary op whose output has the
// first input's element type; op, when set, computes small known values.
func inferBinary(op binaryOp) InferFunc {
	return func(c *InferContext) error {
		s, err := binaryShape(c, c.inShape(0), c.inShape(1))
		if err != nil {
			return err
		}
		dt := c.inElem(0)
		if dt == graph.Undefined {
			dt = c.inElem(1)
		}
		c.setTensor(0, dt, s)
		if op == nil || c.Opset < 7 {
			return nil
		}
		if v := binaryValues(c.val(0), c.val(1), graph.Undefined, op); v != nil {
			c.setValue(0, v)
		} else if a, b := c.symIn(0), c.symIn(1); a != nil && b != nil {
			c.setSym(0, dt, symBinary(c.Node.OpType, a, b))
		}
		return nil
	}
}

// inferMod is Mod: Python's remainder with fmod=0, C's fmod with fmod=1.
func inferMod(c *InferContext) error {
	fmod := Params[ModParams](c.Node, c.Opset).Fmod != 0
	return inferBinary(func(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
		if out.isFloat() {
			out.setFloat(k, math.Mod(x.float(a), y.float(b)))
			return true
		}
		p, q := x.int(a), y.int(b)
		if q == 0 {
			return false
		}
		r := p % q
		if !fmod && r != 0 && (r < 0) != (q < 0) {
			r += q
		}
		out.setInt(k, r)
		return true
	})(c)
}

// inferCompare is the rule of comparisons and logical ops: broadcasting with
// a bool output. f compares floats, i integers (and bools).
func inferCompare(f func(a, b float64) bool, i func(a, b int64) bool) InferFunc {
	return func(c *InferContext) error {
		s, err := binaryShape(c, c.inShape(0), c.inShape(1))
		if err != nil {
			return err
		}
		c.setTensor(0, graph.Bool, s)
		if c.Opset < 7 {
			return nil
		}
		v := binaryValues(c.val(0), c.val(1), graph.Bool,
			func(out *nvals, k int, x *nvals, a int, y *nvals, b int) bool {
				var r bool
				if x.isFloat() || y.isFloat() {
					if f == nil {
						return false
					}
					r = f(x.float(a), y.float(b))
				} else {
					r = i(x.i[a], y.i[b])
				}
				if r {
					out.setInt(k, 1)
				} else {
					out.setInt(k, 0)
				}
				return true
			})
		if v != nil {
			c.setValue(0, v)
		} else if a, b := c.symIn(0), c.symIn(1); c.Node.OpType == "Equal" && a != nil && b != nil {
			c.setSym(0, graph.Bool, symEqual(a, b))
		}
		return nil
	}
}

// inferVariadic is the rule of Sum, Mean, Max and Min: every input
// broadcasts; op, when set, computes small known values.
func inferVariadic(op binaryOp) InferFunc {
	return func(c *InferContext) error {
		shapes := make([]graph.Shape, 0, len(c.Node.Inputs))
		dt := graph.Undefined
		for i := range c.Node.Inputs {
			if !c.has(i) {
				continue
			}
			shapes = append(shapes, c.inShape(i))
			if dt == graph.Undefined {
				dt = c.inElem(i)
			}
		}
		s, err := broadcast(shapes...)
		if err != nil {
			return err
		}
		c.setTensor(0, dt, s)
		if op == nil {
			return nil
		}
		acc := c.val(0)
		for i := 1; i < len(c.Node.Inputs) && acc != nil; i++ {
			acc = binaryValues(acc, c.val(i), graph.Undefined, op)
		}
		if len(c.Node.Inputs) > 0 {
			c.setValue(0, acc)
		}
		return nil
	}
}

// inferWhere broadcasts condition, X and Y; the output has X's type.
func inferWhere(c *InferContext) error {
	s, err := broadcast(c.inShape(0), c.inShape(1), c.inShape(2))
	if err != nil {
		return err
	}
	dt := c.inElem(1)
	if dt == graph.Undefined {
		dt = c.inElem(2)
	}
	c.setTensor(0, dt, s)
	cond, x, y := c.val(0), c.val(1), c.val(2)
	if !small(cond) || cond.DType != graph.Bool || !s.Known() || graph.NumElements(s.Ints()) > maxValueElems {
		return nil
	}
	shape := s.Ints()
	if !small(x) || !small(y) || x.DType != y.DType || x.DType == graph.String {
		// Symbolic elements chosen by a known condition (the target of
		// torch's Expand export, Where(Equal(shape, -1), 1, shape)).
		if sx, sy := c.symIn(1), c.symIn(2); sx != nil && sy != nil && c.inElem(1) == c.inElem(2) {
			c.setSym(0, dt, symWhere(cond, sx, sy, shape))
		}
		return nil
	}
	ic := broadcastIndex(shape, cond.Shape)
	ix, iy := broadcastIndex(shape, x.Shape), broadcastIndex(shape, y.Shape)
	both := &graph.Tensor{DType: x.DType, Shape: []int64{x.NumElements() + y.NumElements()},
		Data: append(append([]byte{}, x.Data[:x.DType.ByteSize(x.NumElements())]...), y.Data...)}
	idx := make([]int, len(ic))
	nx := int(x.NumElements())
	for k := range idx {
		if cond.Data[ic[k]] != 0 {
			idx[k] = ix[k]
		} else {
			idx[k] = nx + iy[k]
		}
	}
	c.setValue(0, takeElems(both, shape, idx))
	return nil
}

// castTarget reads Cast's "to" attribute: a DataType number, or in opset 1
// a type name such as "FLOAT".
func castTarget(c *InferContext) (graph.DType, error) {
	a := c.Node.Attr("to")
	if a == nil {
		return graph.Undefined, fmt.Errorf("missing attribute \"to\"")
	}
	if a.Type == graph.AttrString {
		names := map[string]graph.DType{"FLOAT": graph.Float, "UINT8": graph.Uint8, "INT8": graph.Int8,
			"UINT16": graph.Uint16, "INT16": graph.Int16, "INT32": graph.Int32, "INT64": graph.Int64,
			"STRING": graph.String, "BOOL": graph.Bool, "FLOAT16": graph.Float16, "DOUBLE": graph.Double,
			"UINT32": graph.Uint32, "UINT64": graph.Uint64}
		if dt, ok := names[string(a.S)]; ok {
			return dt, nil
		}
		return graph.Undefined, fmt.Errorf("unknown cast target %q", a.S)
	}
	dt := graph.DType(a.I)
	if !dt.Valid() {
		return graph.Undefined, fmt.Errorf("unknown cast target %d", a.I)
	}
	return dt, nil
}

// inferCast keeps the shape, changes the element type and converts small
// known values.
func inferCast(c *InferContext) error {
	dt, err := castTarget(c)
	if err != nil {
		return err
	}
	return castTo(c, dt)
}

// castTo records a cast of input 0 to dt.
func castTo(c *InferContext, dt graph.DType) error {
	c.setTensor(0, dt, c.inShape(0).Clone())
	if x, ok := decode(c.val(0)); ok && computable(dt) {
		c.setValue(0, x.convert(dt).tensor())
	} else if c.inElem(0).IsInt() {
		c.setSym(0, dt, c.symIn(0))
	}
	return nil
}

// inferCastLike casts input 0 to the element type of input 1.
func inferCastLike(c *InferContext) error {
	dt := c.inElem(1)
	if dt == graph.Undefined {
		c.set(0, graph.TensorType(graph.Undefined, c.inShape(0).Clone()))
		return nil
	}
	return castTo(c, dt)
}

// inferDropout passes the data through; the mask is bool.
func inferDropout(c *InferContext) error {
	c.set(0, c.in(0).Clone())
	c.setTensor(1, graph.Bool, c.inShape(0).Clone())
	return nil
}
