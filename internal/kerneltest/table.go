package kerneltest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// String names the case by opset, attributes and inputs: types, shapes
// and the values of constants of up to 8 elements.
func (c Case) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "opset%d", c.Opset)
	for _, name := range slices.Sorted(maps.Keys(c.Node.Attrs)) {
		a := c.Node.Attrs[name]
		switch a.Type {
		case graph.AttrInt:
			fmt.Fprintf(&b, " %s=%d", name, a.I)
		case graph.AttrFloat:
			fmt.Fprintf(&b, " %s=%g", name, a.F)
		case graph.AttrString:
			fmt.Fprintf(&b, " %s=%s", name, a.S)
		case graph.AttrInts:
			fmt.Fprintf(&b, " %s=%v", name, a.Ints)
		case graph.AttrFloats:
			fmt.Fprintf(&b, " %s=%v", name, a.Floats)
		}
	}
	for _, in := range c.Args {
		if in.T == nil {
			b.WriteString(" -")
			continue
		}
		fmt.Fprintf(&b, " %s%v", in.T.DType, in.T.Shape)
		if in.Const && in.T.NumElements() <= 8 {
			var v []float64
			for i := range in.T.NumElements() {
				v = append(v, in.T.Float64At(i))
			}
			fmt.Fprint(&b, "=", v)
		}
	}
	if len(c.Node.Outputs) > 1 {
		fmt.Fprintf(&b, " outputs=%q", c.Node.Outputs)
	}
	return b.String()
}

// Op is an entry of the table: an op a device may lower and the cases
// that check it.
type Op struct {
	Domain, Op string
	// Cases returns the op's cases with inputs drawn from r.
	Cases func(op string, r *rand.Rand) []Case
}

// String names the op, prefixed by its domain unless it is the default.
func (e Op) String() string {
	if e.Domain == graph.DefaultDomain {
		return e.Op
	}
	return e.Domain + "." + e.Op
}

// diffShapes are the odd shapes of the differential test: sizes 1, 13 and
// 127, ranks 0 to 6.
var diffShapes = [][]int64{{}, {1}, {13}, {127}, {13, 127}, {1, 13, 1}, {13, 1, 127, 1}, {1, 13, 1, 13, 1}, {13, 1, 1, 13, 1, 13}}

// diffPairs are the input shapes of the broadcasting binary ops: equal,
// scalar on either side, numpy broadcasting both ways, ranks 0 to 6.
var diffPairs = [][2][]int64{
	{{}, {}}, {{1}, {13}}, {{127}, {}}, {{}, {13, 127}}, {{13, 1}, {1, 127}}, {{13, 1, 127}, {1, 13, 1}},
	{{127, 1, 1, 13}, {13, 1, 1}}, {{1, 13, 1, 1, 13}, {13, 1, 13, 1}}, {{1, 13, 1, 1, 1, 13}, {13, 1, 1, 1, 13, 1}},
}

// shapesOfRank returns the diffShapes of rank lo to hi.
func shapesOfRank(lo, hi int) [][]int64 {
	var out [][]int64
	for _, s := range diffShapes {
		if len(s) >= lo && len(s) <= hi {
			out = append(out, s)
		}
	}
	return out
}

// gen draws a tensor of the given shape.
type gen func(r *rand.Rand, shape []int64) *graph.Tensor

// gen2 draws the two inputs of a binary op.
type gen2 struct{ a, b gen }

// floats draws float32 values uniform in [lo, hi).
func floats(lo, hi float32) gen {
	return func(r *rand.Rand, shape []int64) *graph.Tensor { return RandFloats(r, shape, lo, hi) }
}

// edges draws values of dt mixed with its edge values (see EdgeValues).
func edges(dt graph.DType) gen {
	return func(r *rand.Rand, shape []int64) *graph.Tensor { return EdgeValues(r, dt, shape) }
}

// nonZeroEdges draws edges(dt) without zeros: integer divisors.
func nonZeroEdges(dt graph.DType) gen {
	return func(r *rand.Rand, shape []int64) *graph.Tensor { return NonZero(EdgeValues(r, dt, shape)) }
}

// hugeDivisors draws float32 values of magnitude in [1e35, 3e38], either
// sign, and some infinities: a quotient of 0.
func hugeDivisors(r *rand.Rand, shape []int64) *graph.Tensor {
	x := RandFloats(r, shape, 1e35, 3e38)
	for i, v := range graph.View[float32](x) {
		switch {
		case i%5 == 4:
			graph.View[float32](x)[i] = float32(math.Inf(1))
		case r.IntN(2) == 0:
			graph.View[float32](x)[i] = -v
		}
	}
	return x
}

// divisors draws float32 values of magnitude in [0.5, 3.5), either sign.
func divisors(r *rand.Rand, shape []int64) *graph.Tensor {
	x := RandFloats(r, shape, 0.5, 3.5)
	for i, xs := 0, graph.View[float32](x); i < len(xs); i++ {
		if r.IntN(2) == 0 {
			xs[i] = -xs[i]
		}
	}
	return x
}

// wholes draws float32 whole numbers in [-3, 3].
func wholes(r *rand.Rand, shape []int64) *graph.Tensor {
	x := RandFloats(r, shape, -3.5, 3.5)
	for i, xs := 0, graph.View[float32](x); i < len(xs); i++ {
		xs[i] = float32(math.Round(float64(xs[i])))
	}
	return x
}

// shifts draws uint32 or uint64 shift amounts below the type's width.
func shifts(dt graph.DType) gen {
	return func(r *rand.Rand, shape []int64) *graph.Tensor {
		x := graph.NewTensor(dt, shape)
		for i := range x.NumElements() {
			if dt == graph.Uint32 {
				graph.View[uint32](x)[i] = uint32(r.IntN(32))
			} else {
				graph.View[uint64](x)[i] = uint64(r.IntN(64))
			}
		}
		return x
	}
}

// same draws both inputs of a binary op with g.
func same(g gen) gen2 { return gen2{g, g} }

// scalar returns a rank-0 tensor of dt holding v.
func scalar(dt graph.DType, v float64) *graph.Tensor {
	x := graph.NewTensor(dt, []int64{})
	switch dt {
	case graph.Float:
		graph.View[float32](x)[0] = float32(v)
	case graph.Int32:
		graph.View[int32](x)[0] = int32(v)
	case graph.Int64:
		graph.View[int64](x)[0] = int64(v)
	default:
		panic("scalar: " + dt.String())
	}
	return x
}

// unaryCases returns the cases of a one-input elementwise op at opset: every
// diffShapes shape with inputs drawn by each generator.
func unaryCases(opset int64, gens []gen, attrs ...*graph.Attribute) func(string, *rand.Rand) []Case {
	return func(op string, r *rand.Rand) []Case {
		var cs []Case
		for _, g := range gens {
			for _, s := range diffShapes {
				cs = append(cs, Case{Node(op, []string{"x"}, attrs...), opset, []Arg{{T: g(r, s)}}})
			}
		}
		return cs
	}
}

// binaryCases returns the cases of a broadcasting two-input op at opset: every
// diffPairs pair with inputs drawn by each generator pair, the second
// input a constant in every other case.
func binaryCases(opset int64, gens []gen2, attrs ...*graph.Attribute) func(string, *rand.Rand) []Case {
	return func(op string, r *rand.Rand) []Case {
		var cs []Case
		for _, g := range gens {
			for i, p := range diffPairs {
				cs = append(cs, Case{Node(op, []string{"a", "b"}, attrs...), opset,
					[]Arg{{T: g.a(r, p[0])}, {T: g.b(r, p[1]), Const: i%2 == 1}}})
			}
		}
		return cs
	}
}

// modCases are the cases of Mod: fmod on float32, both modes on the
// integer types.
func modCases(op string, r *rand.Rand) []Case {
	cs := binaryCases(13, []gen2{{floats(-8, 8), divisors}, {floats(-8, 8), hugeDivisors}}, IntAttr("fmod", 1))(op, r)
	for _, fmod := range []int64{0, 1} {
		cs = append(cs, binaryCases(13, intPairs(true), IntAttr("fmod", fmod))(op, r)...)
	}
	return cs
}

// intPairs draws operands of the integer types of intops.comp, divisors
// without zeros when nonZeroB is set.
func intPairs(nonZeroB bool) []gen2 {
	var gs []gen2
	for _, dt := range []graph.DType{graph.Int32, graph.Int64, graph.Uint32, graph.Uint64} {
		g := gen2{edges(dt), edges(dt)}
		if nonZeroB {
			g.b = nonZeroEdges(dt)
		}
		gs = append(gs, g)
	}
	return gs
}

// compareGens returns the generators of the comparisons: every type
// of predicate.comp, bool for Equal only.
func compareGens(op string) []gen2 {
	gs := []gen2{same(edges(graph.Float)), same(edges(graph.Int32)), same(edges(graph.Int64)), same(edges(graph.Uint8)), same(edges(graph.Int8))}
	if op == "Equal" {
		gs = append(gs, same(edges(graph.Bool)))
	}
	return gs
}

// compareCases are the cases of a comparison.
func compareCases(op string, r *rand.Rand) []Case {
	return binaryCases(13, compareGens(op))(op, r)
}

// isInfCases are the cases of IsInf with each pair of detect attributes.
func isInfCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		n := Node(op, []string{"x"}, IntAttr("detect_positive", int64(i&1)), IntAttr("detect_negative", int64(i>>1&1)))
		cs = append(cs, Case{n, 20, []Arg{{T: EdgeValues(r, graph.Float, s)}}})
	}
	return cs
}

// whereCases are the cases of Where: condition, X and Y broadcast
// together, elements of 4 and 8 bytes.
func whereCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range [][3][]int64{{{}, {}, {}}, {{13}, {1}, {}}, {{127}, {}, {127}}, {{13, 1, 127}, {1, 13, 1}, {127}},
		{{1, 13, 1, 1, 1, 13}, {13, 1, 1, 1, 13, 1}, {1}}, {{13, 1, 1, 13, 1, 13}, {}, {13, 1, 13}}} {
		for _, dt := range []graph.DType{graph.Float, graph.Int32, graph.Int64} {
			cs = append(cs, Case{Node(op, []string{"c", "a", "b"}), 16,
				[]Arg{{T: EdgeValues(r, graph.Bool, s[0])}, {T: EdgeValues(r, dt, s[1])}, {T: EdgeValues(r, dt, s[2]), Const: i%2 == 1}}})
		}
	}
	return cs
}

// castTypes are the types cast.comp converts between.
var castTypes = []graph.DType{graph.Float, graph.Int32, graph.Int64, graph.Bool, graph.Uint8, graph.Int8}

// castCases are the cases of Cast and CastLike between every pair of
// castTypes, float32 values within the range of the target type.
func castCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for _, from := range castTypes {
		for _, to := range castTypes {
			for _, s := range [][]int64{{}, {13}, {1, 127}, {13, 1, 1, 13, 1, 13}} {
				x := EdgeValues(r, from, s)
				if from == graph.Float {
					lo, hi := float32(-1000), float32(1000)
					switch to {
					case graph.Uint8:
						lo, hi = 0, 256
					case graph.Int8:
						lo, hi = -128, 128
					}
					x = RandFloats(r, s, lo, hi)
				}
				if op == "Cast" {
					cs = append(cs, Case{Node(op, []string{"x"}, IntAttr("to", int64(to))), 13, []Arg{{T: x}}})
				} else {
					cs = append(cs, Case{Node(op, []string{"x", "like"}), 15, []Arg{{T: x}, {T: graph.NewTensor(to, []int64{1})}}})
				}
			}
		}
	}
	return cs
}

// argCases are the cases of ArgMax and ArgMin: every axis, with ties and
// NaNs.
func argCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for _, s := range shapesOfRank(1, 6) {
		for axis := -len(s); axis < len(s); axis++ {
			x := RandFloats(r, s, -3, 3)
			for i, xs := 0, graph.View[float32](x); i < len(xs); i++ {
				xs[i] = float32(math.Round(float64(xs[i])))
				if r.IntN(50) == 0 {
					xs[i] = float32(math.NaN())
				}
			}
			n := Node(op, []string{"x"}, IntAttr("axis", int64(axis)), IntAttr("keepdims", r.Int64N(2)), IntAttr("select_last_index", r.Int64N(2)))
			cs = append(cs, Case{n, 13, []Arg{{T: x}}})
		}
	}
	return cs
}

// channelShapes are the diffShapes of rank 2 to 6: [N, C, ...] inputs.
var channelShapes = shapesOfRank(2, 6)

// batchNormCases are the cases of BatchNormalization in inference form,
// the parameters constant or not.
func batchNormCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range channelShapes {
		p := s[1:2]
		konst := i%2 == 0
		cs = append(cs, Case{Node(op, []string{"x", "scale", "b", "mean", "var"}, FloatAttr("epsilon", 1e-3)), 15,
			[]Arg{{T: RandFloats(r, s, -4, 4)}, {T: RandFloats(r, p, -2, 2), Const: konst}, {T: RandFloats(r, p, -2, 2), Const: konst},
				{T: RandFloats(r, p, -1, 1), Const: konst}, {T: RandFloats(r, p, 0.1, 3), Const: konst}}})
	}
	return cs
}

// conv is a convolution's X and W shapes and attributes.
type conv struct {
	x, w  []int64
	attrs []*graph.Attribute
}

// convShapes are convolutions over one to three spatial axes: X, W and
// the attributes.
var convShapes = []conv{
	{[]int64{1, 1, 1}, []int64{1, 1, 1}, nil},
	{[]int64{1, 13, 127}, []int64{13, 13, 3}, []*graph.Attribute{IntsAttr("pads", 1, 1)}},
	{[]int64{1, 13, 13, 13}, []int64{13, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 13), IntsAttr("strides", 2, 2), IntsAttr("pads", 1, 0, 1, 2)}},
	{[]int64{13, 1, 13, 13}, []int64{1, 1, 3, 1}, []*graph.Attribute{IntsAttr("dilations", 2, 1), StringAttr("auto_pad", "SAME_UPPER")}},
	{[]int64{1, 1, 13, 1, 13}, []int64{13, 1, 3, 1, 3}, []*graph.Attribute{IntsAttr("strides", 1, 1, 2)}},
	// At least 16 output channels per group: GPUs run these on
	// convgemm.comp, whose depth (input channels × taps) is split where
	// it has 8 or more 16-deep steps.
	{[]int64{1, 13, 13, 13}, []int64{17, 13, 3, 3}, []*graph.Attribute{IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{2, 26, 13}, []int64{34, 13, 5}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("strides", 2), IntsAttr("pads", 2, 1)}},
	{[]int64{1, 3, 5, 5, 5}, []int64{16, 3, 3, 3, 3}, []*graph.Attribute{IntsAttr("pads", 1, 0, 1, 1, 2, 1)}},
	{[]int64{1, 32, 7, 7}, []int64{32, 32, 1, 1}, []*graph.Attribute{IntsAttr("strides", 2, 2), IntsAttr("pads", 1, 1, 0, 0)}},
}

// convDiffCases are the cases of Conv and FusedConv (each activation, Swish
// included) with W and B constant or not and B absent.
func convDiffCases(op string, r *rand.Rand) []Case {
	acts := [][]*graph.Attribute{nil}
	opset := int64(11)
	if op == "FusedConv" {
		opset = 1
		acts = [][]*graph.Attribute{{StringAttr("activation", ops.ActRelu)}, {StringAttr("activation", ops.ActSigmoid)},
			{StringAttr("activation", ops.ActLeakyRelu), FloatAttr("alpha", 0.2)},
			{StringAttr("activation", ops.ActClip), FloatAttr("alpha", -0.5), FloatAttr("beta", 0.75)}, {StringAttr("activation", ops.ActSwish)},
			{StringAttr("activation", ops.ActHardSigmoid), FloatAttr("alpha", 0.3), FloatAttr("beta", 0.4)}, {StringAttr("activation", ops.ActHardSwish)}}
	}
	var cs []Case
	for i, c := range convShapes {
		for _, act := range acts {
			n := Node(op, []string{"x", "w", "b"}, append(slices.Clone(c.attrs), act...)...)
			args := []Arg{{T: RandFloats(r, c.x, -1, 1)}, {T: RandFloats(r, c.w, -1, 1), Const: i%2 == 0}, {T: RandFloats(r, c.w[:1], -1, 1), Const: i%2 == 0}}
			if r.IntN(3) == 0 {
				n.Inputs, args = n.Inputs[:2], args[:2]
			}
			cs = append(cs, Case{n, opset, args})
		}
	}
	return append(cs, depthwiseCases(op, opset, acts, r)...)
}

// depthwiseShapes are depthwise convolutions (one input channel per
// group), which Vulkan runs on dwconv.comp: 3x3, 5x5 and 7x7 kernels,
// strides 1 to 3, dilation 2, asymmetric pads, a channel multiplier of
// 2, batches of 2, output planes of 1, 7, 13, 17x23, 56x56 (tiles of
// several rows) and 45x65 (2x2 tiles, the last row and column of tiles
// one shorter), a tile halved to fit shared memory (5x5 stride 3 over
// 61x97, the last tile one row shorter), 1-D, and a dilation whose
// patch does not fit it (conv.comp then).
var depthwiseShapes = []conv{
	{[]int64{1, 3, 1, 1}, []int64{3, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 3), IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{1, 4, 7, 7}, []int64{4, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 4), IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{2, 5, 13, 13}, []int64{5, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 5), IntsAttr("strides", 2, 2), IntsAttr("pads", 1, 0, 0, 1)}},
	{[]int64{1, 3, 17, 23}, []int64{6, 1, 5, 5}, []*graph.Attribute{IntAttr("group", 3), IntsAttr("pads", 2, 2, 2, 2)}},
	{[]int64{1, 2, 56, 56}, []int64{2, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{1, 2, 45, 65}, []int64{2, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{1, 3, 56, 56}, []int64{3, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 3), IntsAttr("strides", 2, 2), IntsAttr("pads", 0, 0, 1, 1)}},
	{[]int64{1, 2, 23, 17}, []int64{2, 1, 7, 7}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("pads", 3, 3, 3, 3)}},
	{[]int64{1, 3, 13, 13}, []int64{3, 1, 5, 5}, []*graph.Attribute{IntAttr("group", 3), IntsAttr("dilations", 2, 2), IntsAttr("pads", 4, 3, 4, 5)}},
	{[]int64{2, 4, 17, 23}, []int64{8, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 4), IntsAttr("dilations", 2, 2), IntsAttr("strides", 2, 2), IntsAttr("pads", 2, 1, 2, 1)}},
	{[]int64{1, 2, 9, 9}, []int64{2, 1, 7, 7}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("strides", 2, 2), IntsAttr("pads", 3, 2, 3, 2)}},
	{[]int64{1, 2, 61, 97}, []int64{2, 1, 5, 5}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("strides", 3, 3), IntsAttr("pads", 2, 2, 2, 2)}},
	{[]int64{2, 3, 40}, []int64{6, 1, 5}, []*graph.Attribute{IntAttr("group", 3), IntsAttr("strides", 2), IntsAttr("pads", 1, 3)}},
	{[]int64{1, 2, 85, 85}, []int64{2, 1, 3, 3}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("dilations", 40, 40)}},
}

// depthwiseCases are the cases of op (opset) over depthwiseShapes, with
// bias or not; FusedConv's take one of acts each in turn, and every
// second a residual Sum (input 3, with the bias).
func depthwiseCases(op string, opset int64, acts [][]*graph.Attribute, r *rand.Rand) []Case {
	var cs []Case
	for i, c := range depthwiseShapes {
		n := Node(op, []string{"x", "w", "b"}, append(slices.Clone(c.attrs), acts[i%len(acts)]...)...)
		konst := i%2 == 0
		args := []Arg{{T: RandFloats(r, c.x, -1, 1)}, {T: RandFloats(r, c.w, -1, 1), Const: konst}, {T: RandFloats(r, c.w[:1], -1, 1), Const: konst}}
		switch {
		case op == "FusedConv" && i%2 == 1:
			n.Inputs = append(n.Inputs, "s")
			args = append(args, Arg{T: RandFloats(r, convOut(c), -1, 1)})
		case i%3 == 2:
			n.Inputs, args = n.Inputs[:2], args[:2]
		}
		cs = append(cs, Case{n, opset, args})
	}
	return cs
}

// convOut returns the output shape of convolution c, its pads explicit.
func convOut(c conv) []int64 {
	p := ops.WindowOf(Node("Conv", []string{"x", "w"}, c.attrs...), 11)
	x, w := c.x, c.w
	r := len(x) - 2
	st, dil, pads := p.StridesFor(r), p.DilationsFor(r), p.PadsFor(r)
	out := []int64{x[0], w[0]}
	for i := range r {
		out = append(out, (x[2+i]+pads[i]+pads[r+i]-(w[2+i]-1)*dil[i]-1)/st[i]+1)
	}
	return out
}

// dynamicQuantizeCases are the cases of DynamicQuantizeLinear: ranges on
// both sides of 0, on one side only and empty (all zeros: scale 0),
// halves of a range of 255 (scale 1, every value a tie), values at and
// beside the ties of another range, and tensors
// whose range spans many workgroups.
func dynamicQuantizeCases(op string, r *rand.Rand) []Case {
	halves := func(r *rand.Rand, shape []int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		v := graph.View[float32](x)
		for i := range v {
			v[i] = float32(r.IntN(511)-255) / 2
		}
		if len(v) > 1 {
			v[0], v[len(v)-1] = -127.5, 127.5
		}
		return x
	}
	// nearTies puts values at and one ulp beside the ties of a range
	// whose scale is no power of 2.
	nearTies := func(r *rand.Rand, shape []int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		v := graph.View[float32](x)
		lo, hi := float32(-1.3), float32(2.9)
		s := (hi - lo) / 255
		for i := range v {
			t := (float32(r.IntN(255)-85) + 0.5) * s
			v[i] = math.Nextafter32(t, float32(r.IntN(3)-1)*math.MaxFloat32+t)
		}
		if len(v) > 1 {
			v[0], v[len(v)-1] = lo, hi
		}
		return x
	}
	gens := []gen{floats(-3, 5), floats(0.25, 7), floats(-1e-3, -1e-5), floats(0, 0), halves, nearTies, floats(-1e6, 3e5)}
	var cs []Case
	for i, s := range append(shapesOfRank(0, 6), []int64{3, 70001}) {
		for j, g := range gens {
			if (i+j)%2 == 0 || len(s) == 2 && s[1] == 70001 {
				cs = append(cs, Case{Node(op, []string{"x"}), 11, []Arg{{T: g(r, s)}}})
				cs[len(cs)-1].Node.Outputs = []string{"y", "y_scale", "y_zero_point"}
			}
		}
	}
	return cs
}

// int8Operand draws a uint8 or int8 tensor mixing small values and the
// types' extremes, and its zero point of zn values (nil when zn is 0).
func int8Operand(r *rand.Rand, dt graph.DType, shape []int64, zn int64) (x, zp *graph.Tensor) {
	x = EdgeValues(r, dt, shape)
	if zn > 0 {
		zp = RandomTensor(dt, []int64{zn}, r.Uint64())
	}
	return x, zp
}

// integerTypes are the operand types of ConvInteger and MatMulInteger
// cycled through by the cases: both unsigned, both signed, and mixed.
var integerTypes = [][2]graph.DType{{graph.Uint8, graph.Uint8}, {graph.Int8, graph.Int8}, {graph.Uint8, graph.Int8}, {graph.Int8, graph.Uint8}}

// integerCase is a case of op on a and b with their zero points, an
// absent zero point left out (the last) or named "" (a before b).
func integerCase(op string, opset int64, a, b, za, zb *graph.Tensor, constB bool, attrs ...*graph.Attribute) Case {
	n := Node(op, []string{"a", "b", "za", "zb"}, attrs...)
	args := []Arg{{T: a}, {T: b, Const: constB}, {T: za, Const: true}, {T: zb, Const: constB}}
	if zb == nil {
		n.Inputs, args = n.Inputs[:3], args[:3]
		if za == nil {
			n.Inputs, args = n.Inputs[:2], args[:2]
		}
	} else if za == nil {
		n.Inputs[2] = ""
	}
	return Case{n, opset, args}
}

// convIntegerCases are the cases of ConvInteger over convShapes: each
// pair of operand types, zero points absent, scalar or per output
// channel, W constant or not.
func convIntegerCases(op string, r *rand.Rand) []Case {
	var cs []Case
	convIntegerOperands(r, func(i, j int, c conv, x, w, zx, zw *graph.Tensor) {
		cs = append(cs, integerCase(op, 10, x, w, zx, zw, (i+j)%2 == 0, c.attrs...))
	})
	return cs
}

// convIntegerOperands calls each with the operands of the ConvInteger and
// QLinearConv cases: for convShapes[i] and integerTypes[j], x and w with
// their zero points absent, scalar or (w) per output channel.
func convIntegerOperands(r *rand.Rand, each func(i, j int, c conv, x, w, zx, zw *graph.Tensor)) {
	for i, c := range convShapes {
		for j, ty := range integerTypes {
			zn := [][2]int64{{0, 0}, {1, 1}, {1, c.w[0]}, {0, c.w[0]}}[(i+j)%4]
			x, zx := int8Operand(r, ty[0], c.x, zn[0])
			w, zw := int8Operand(r, ty[1], c.w, zn[1])
			each(i, j, c, x, w, zx, zw)
		}
	}
}

// matMulIntegerCases are the cases of MatMulInteger over diffMatMulPairs
// (sizes 13, 127 and 2×70×33·33×65) and pairs whose depth is a multiple
// of 4 (what the packed 4×8-bit dot product takes): each pair of operand
// types, zero points absent, scalar, per row of A and per column of B.
func matMulIntegerCases(op string, r *rand.Rand) []Case {
	var cs []Case
	matMulIntegerOperands(r, func(i, j int, a, b, za, zb *graph.Tensor) {
		cs = append(cs, integerCase(op, 10, a, b, za, zb, (i+j)%2 == 1))
	})
	return cs
}

// matMulIntegerOperands calls each with the operands of the MatMulInteger
// and QLinearMatMul cases: for integerMatMulPairs()[i] and
// integerTypes[j], a and b with their zero points absent, scalar, per row
// of a and per column of b.
func matMulIntegerOperands(r *rand.Rand, each func(i, j int, a, b, za, zb *graph.Tensor)) {
	for i, p := range integerMatMulPairs() {
		m, n := matMulRowsCols(p[0], p[1])
		for j, ty := range integerTypes {
			zn := [][2]int64{{0, 0}, {1, 1}, {m, n}, {0, n}, {m, 1}}[(i+j)%5]
			a, za := int8Operand(r, ty[0], p[0], zn[0])
			b, zb := int8Operand(r, ty[1], p[1], zn[1])
			each(i, j, a, b, za, zb)
		}
	}
}

// integerMatMulPairs are the operand shapes of the MatMulInteger and
// QLinearMatMul cases: diffMatMulPairs (sizes 13, 127 and 2×70×33·33×65)
// and pairs whose depth is a multiple of 4 (what the packed 4×8-bit dot
// product takes).
func integerMatMulPairs() [][2][]int64 {
	deep := [][2][]int64{{{64}, {64, 7}}, {{3, 1, 20}, {20, 37}}, {{2, 5, 132}, {1, 132, 9}}}
	return append(slices.Clone(diffMatMulPairs), deep...)
}

// matMulRowsCols returns the rows m of a's matrices and the columns n of
// b's (1 for a vector).
func matMulRowsCols(a, b []int64) (m, n int64) {
	m, n = 1, 1
	if len(a) > 1 {
		m = a[len(a)-2]
	}
	if len(b) > 1 {
		n = b[len(b)-1]
	}
	return m, n
}

// qlinearTypes are the output types of the QLinearConv and QLinearMatMul
// cases, cycled through.
var qlinearTypes = []graph.DType{graph.Uint8, graph.Int8}

// qlinearCase is a case of QLinearConv or QLinearMatMul (opset 10) on a
// and b with zero points za and zb (nil: absent, named ""), scales as and
// bs of the counts given, and y of type yt: y_scale is set so that y
// spreads over its type's range and beyond (saturating), for sums of
// depth products; bias (QLinearConv, nil: absent) is input 8. Scales and
// zero points are constant where constB is.
func qlinearCase(r *rand.Rand, op string, a, b, za, zb *graph.Tensor, asn, bsn, depth int64, yt graph.DType, bias *graph.Tensor, constB bool,
	attrs ...*graph.Attribute) Case {
	scale := func(n int64) *graph.Tensor {
		if n == 1 && r.IntN(2) == 0 {
			return graph.Scalar(graph.Float, 0.002+0.018*r.Float32())
		}
		return RandFloats(r, []int64{n}, 0.002, 0.02)
	}
	ys := graph.Scalar(graph.Float, float32(0.03*math.Sqrt(float64(depth))))
	yz := RandomTensor(yt, []int64{}, r.Uint64())
	n := Node(op, []string{"a", "as", "za", "b", "bs", "zb", "ys", "yz"}, attrs...)
	args := []Arg{{T: a}, {T: scale(asn), Const: true}, {T: za, Const: true}, {T: b, Const: constB}, {T: scale(bsn), Const: constB},
		{T: zb, Const: constB}, {T: ys, Const: true}, {T: yz, Const: true}}
	for _, k := range []int{2, 5} {
		if args[k].T == nil {
			n.Inputs[k] = ""
		}
	}
	if bias != nil {
		n.Inputs, args = append(n.Inputs, "bias"), append(args, Arg{T: bias, Const: constB})
	}
	return Case{n, 10, args}
}

// qlinearConvCases are the cases of QLinearConv over convShapes: each
// pair of operand types, uint8 and int8 y, zero points absent, scalar or
// (w) per output channel, w_scale scalar or per output channel, the bias
// absent or present, w constant or not.
func qlinearConvCases(op string, r *rand.Rand) []Case {
	var cs []Case
	convIntegerOperands(r, func(i, j int, c conv, x, w, zx, zw *graph.Tensor) {
		var bias *graph.Tensor
		if (i+j)%3 != 0 {
			bias = RandomTensor(graph.Int32, c.w[:1], r.Uint64())
			for k, v := range graph.View[int32](bias) {
				graph.View[int32](bias)[k] = v % 40000
			}
		}
		wsn := []int64{1, c.w[0]}[(i+j/2)%2]
		cs = append(cs, qlinearCase(r, op, x, w, zx, zw, 1, wsn, graph.NumElements(c.w[1:]), qlinearTypes[(i+j)%2], bias, (i+j)%2 == 0, c.attrs...))
	})
	return cs
}

// qlinearMatMulCases are the cases of QLinearMatMul over
// integerMatMulPairs: each pair of operand types, uint8 and int8 y, zero
// points absent, scalar, per row of a and per column of b, scales scalar
// or per row of a and per column of b.
func qlinearMatMulCases(op string, r *rand.Rand) []Case {
	var cs []Case
	matMulIntegerOperands(r, func(i, j int, a, b, za, zb *graph.Tensor) {
		m, n := matMulRowsCols(a.Shape, b.Shape)
		sn := [][2]int64{{1, 1}, {m, n}, {1, n}, {m, 1}}[(i+j)%4]
		cs = append(cs, qlinearCase(r, op, a, b, za, zb, sn[0], sn[1], a.Shape[a.Rank()-1], qlinearTypes[(i+j/2)%2], nil, (i+j)%2 == 1))
	})
	return cs
}

// qdqShapes are the shapes of the QuantizeLinear and DequantizeLinear
// cases: odd sizes (4-bit elements straddle bytes, 8-bit ones words) and
// ranks 0 to 6.
var qdqShapes = [][]int64{{}, {13}, {13, 127}, {1, 13, 1, 13, 1}, {13, 1, 1, 13, 1, 13}, {3, 7, 7001}}

// qdqCases are the cases of QuantizeLinear and DequantizeLinear: uint8,
// int8, uint4 and int4, scales per tensor (opset 10; 21 for the 4-bit
// types), per axis (13, 21) and per block along a random axis (21),
// zero points present or absent; QuantizeLinear meets values on and one
// ulp beside its rounding ties, and values beyond the type's range.
func qdqCases(op string, r *rand.Rand) []Case {
	types := []graph.DType{graph.Uint8, graph.Int8, graph.Uint4, graph.Int4}
	var cs []Case
	for i, s := range qdqShapes {
		for j, dt := range types {
			layout := (i + j) % 3
			if len(s) == 0 {
				layout = 0
			}
			opset := []int64{10, 13, 21}[layout]
			if dt == graph.Uint4 || dt == graph.Int4 {
				opset = 21
			}
			var attrs []*graph.Attribute
			ss := []int64{}
			if layout > 0 {
				a := r.IntN(len(s))
				attrs = append(attrs, IntAttr("axis", int64(a-len(s)*r.IntN(2))))
				ss = []int64{s[a]}
				if layout == 2 {
					bs := int64(1 + r.IntN(5))
					attrs = append(attrs, IntAttr("block_size", bs))
					ss = slices.Clone(s)
					ss[a] = (s[a] + bs - 1) / bs
				}
			}
			scale := graph.NewTensor(graph.Float, ss)
			for k := range graph.View[float32](scale) {
				graph.View[float32](scale)[k] = []float32{0.25, 0.5, 0.037, 1.3}[r.IntN(4)]
			}
			var zp *graph.Tensor
			if (i+j)%4 != 3 {
				zp = RandomTensor(dt, ss, r.Uint64())
			}
			x := EdgeValues(r, graph.Uint8, s)
			if dt == graph.Int8 {
				x = EdgeValues(r, graph.Int8, s)
			}
			if dt == graph.Uint4 || dt == graph.Int4 {
				x = RandomTensor(dt, s, r.Uint64())
			}
			if op == "QuantizeLinear" {
				x = graph.NewTensor(graph.Float, s)
				v := graph.View[float32](x)
				for k := range v {
					t := float32(r.IntN(600)-300) / 4 * []float32{1, 1.3, 0.037}[k%3]
					v[k] = math.Nextafter32(t, float32(r.IntN(3)-1)*math.MaxFloat32+t)
				}
			}
			n := Node(op, []string{"x", "scale", "zp"}, attrs...)
			args := []Arg{{T: x}, {T: scale, Const: true}, {T: zp, Const: true}}
			if zp == nil {
				n.Inputs, args = n.Inputs[:2], args[:2]
				if op == "QuantizeLinear" && dt != graph.Uint8 {
					n.Attrs["output_dtype"] = IntAttr("output_dtype", int64(dt))
					opset = 21
				}
			}
			cs = append(cs, Case{n, opset, args})
		}
	}
	return cs
}

// convTransposeCases are the cases of ConvTranspose.
func convTransposeCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, c := range []conv{
		{[]int64{1, 1, 1}, []int64{1, 1, 1}, nil},
		{[]int64{1, 13, 13}, []int64{13, 1, 3}, []*graph.Attribute{IntsAttr("strides", 2), IntsAttr("pads", 1, 0)}},
		{[]int64{1, 13, 13, 1}, []int64{13, 1, 3, 1}, []*graph.Attribute{IntAttr("group", 13), IntsAttr("strides", 2, 1), IntsAttr("output_padding", 1, 0)}},
		{[]int64{13, 1, 1, 13}, []int64{1, 13, 1, 3}, []*graph.Attribute{IntsAttr("dilations", 1, 2), StringAttr("auto_pad", "SAME_UPPER"), IntsAttr("strides", 1, 2)}},
		{[]int64{1, 1, 13, 1, 13}, []int64{1, 1, 3, 1, 3}, []*graph.Attribute{IntsAttr("strides", 1, 1, 2)}},
		// The taps an output walks (conv.comp's firstTap): stride 3 with
		// dilation 2 (every third tap), stride 4 with dilation 2 (every
		// second tap, and none for outputs of odd offset), a kernel
		// narrower than its stride (outputs no tap reaches), a UNet
		// up-convolution (2×2, stride 2) over channels in two groups, and
		// an output_shape that pads the start by a negative amount.
		{[]int64{1, 3, 7, 6}, []int64{3, 2, 5, 4}, []*graph.Attribute{IntsAttr("strides", 3, 2), IntsAttr("dilations", 2, 3), IntsAttr("pads", 2, 1, 0, 3)}},
		{[]int64{2, 2, 9}, []int64{2, 3, 5}, []*graph.Attribute{IntsAttr("strides", 4), IntsAttr("dilations", 2), IntsAttr("pads", 1, 2)}},
		{[]int64{1, 4, 5, 5}, []int64{4, 3, 2, 1}, []*graph.Attribute{IntsAttr("strides", 3, 2), IntsAttr("output_padding", 2, 1)}},
		{[]int64{1, 8, 6, 7}, []int64{8, 3, 2, 2}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("strides", 2, 2)}},
		{[]int64{1, 2, 5, 5}, []int64{2, 2, 3, 3}, []*graph.Attribute{IntsAttr("strides", 2, 2), IntsAttr("output_shape", 12, 11)}},
		// Groups of 16 output channels or more, which a GPU's
		// implicit GEMM takes (convgemm.comp, a GEMM per phase of the
		// strides): DCGAN's 4×4 stride 2 (four taps a phase), UNet's 2×2
		// stride 2 over two images (one), stride 3 with dilation 2 and
		// 3×2 strides (phases of 1 to 3 taps and some of none), two
		// groups with output_padding, a deep 1-D one (several K steps),
		// 3-D, and stride 1 over more than one column tile.
		{[]int64{1, 8, 5, 5}, []int64{8, 16, 4, 4}, []*graph.Attribute{IntsAttr("strides", 2, 2), IntsAttr("pads", 1, 1, 1, 1)}},
		{[]int64{2, 6, 4, 3}, []int64{6, 20, 2, 2}, []*graph.Attribute{IntsAttr("strides", 2, 2)}},
		{[]int64{1, 5, 4, 5}, []int64{5, 17, 5, 3}, []*graph.Attribute{IntsAttr("strides", 3, 2), IntsAttr("dilations", 2, 1), IntsAttr("pads", 2, 1, 0, 2)}},
		{[]int64{1, 6, 3, 4}, []int64{6, 16, 3, 3}, []*graph.Attribute{IntAttr("group", 2), IntsAttr("strides", 2, 2), IntsAttr("output_padding", 1, 1)}},
		{[]int64{1, 40, 9}, []int64{40, 16, 3}, []*graph.Attribute{IntsAttr("strides", 2), IntsAttr("pads", 1, 0)}},
		{[]int64{1, 3, 3, 4, 2}, []int64{3, 16, 2, 3, 2}, []*graph.Attribute{IntsAttr("strides", 2, 1, 2)}},
		{[]int64{1, 4, 12, 12}, []int64{4, 18, 3, 3}, []*graph.Attribute{IntsAttr("pads", 1, 1, 1, 1)}},
	} {
		n := Node(op, []string{"x", "w", "b"}, c.attrs...)
		m := c.w[1] * max(1, ops.ConvGroupOf(n, 11).Group)
		args := []Arg{{T: RandFloats(r, c.x, -1, 1)}, {T: RandFloats(r, c.w, -1, 1), Const: i%2 == 0}, {T: RandFloats(r, []int64{m}, -1, 1)}}
		if i%3 == 2 {
			n.Inputs, args = n.Inputs[:2], args[:2]
		}
		cs = append(cs, Case{n, 11, args})
	}
	return cs
}

// cumSumCases are the cases of CumSum: a random axis of each shape, each
// mode, int64 and int32 axes.
func cumSumCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		axis := r.Int64N(int64(2*len(s))) - int64(len(s))
		dt := []graph.DType{graph.Int64, graph.Int32}[i%2]
		n := Node(op, []string{"x", "axis"}, IntAttr("exclusive", int64(i&1)), IntAttr("reverse", int64(i>>1&1)))
		cs = append(cs, Case{n, 14, []Arg{{T: RandFloats(r, s, -1, 1)}, {T: scalar(dt, float64(axis)), Const: true}}})
	}
	return cs
}

// gatherElementsCases are the cases of GatherElements: a random axis of
// each shape, indices smaller than the data along the other axes.
func gatherElementsCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		a := r.IntN(len(s))
		ind := make([]int64, len(s))
		for k, d := range s {
			ind[k] = 1 + r.Int64N(d)
		}
		ind[a] = 1 + r.Int64N(13)
		for _, dt := range []graph.DType{graph.Float, graph.Int64} {
			it := []graph.DType{graph.Int64, graph.Int32}[i%2]
			cs = append(cs, Case{Node(op, []string{"x", "i"}, IntAttr("axis", int64(a-len(s)*(i%2)))), 13,
				[]Arg{{T: EdgeValues(r, dt, s)}, {T: RandInts(r, it, ind, -s[a], s[a]), Const: dt == graph.Int64}}})
		}
	}
	return cs
}

// layerNormCases are the cases of LayerNormalization (and the planner's
// fused node): a random axis of each shape, Scale over the normalized
// shape or a suffix of it, B present or absent.
func layerNormCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		a := r.IntN(len(s))
		norm := s[a+r.IntN(len(s)-a):]
		n := Node(op, []string{"x", "scale", "b"}, IntAttr("axis", int64(a)), FloatAttr("epsilon", 1e-3))
		args := []Arg{{T: RandFloats(r, s, -3, 3)}, {T: RandFloats(r, norm, -2, 2), Const: i%2 == 0}, {T: RandFloats(r, s[a:], -2, 2)}}
		if i%3 == 1 {
			n.Inputs, args = n.Inputs[:2], args[:2]
		}
		cs = append(cs, Case{n, 17, args})
	}
	return cs
}

// fusedLayerNormCases are layerNormCases for the node of ops.FusedDomain,
// imported at version 1.
func fusedLayerNormCases(op string, r *rand.Rand) []Case {
	cs := layerNormCases(op, r)
	for i := range cs {
		cs[i].Opset = 1
	}
	return cs
}

// lossCases are the cases of the loss ops: [N, C, d...] scores, int32
// and int64 targets, weights, ignore_index, every reduction and
// SoftmaxCrossEntropyLoss's log_prob output.
func lossCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, x := range channelShapes {
		for _, red := range []string{"none", "sum", "mean"} {
			target := append([]int64{x[0]}, x[2:]...)
			tt := []graph.DType{graph.Int64, graph.Int32}[i%2]
			tv := RandInts(r, tt, target, 0, x[1])
			n := Node(op, []string{"x", "t"}, StringAttr("reduction", red))
			args := []Arg{{T: RandFloats(r, x, -3, 3)}, {T: tv}}
			if r.IntN(2) == 0 {
				n.Inputs, args = append(n.Inputs, "w"), append(args, Arg{T: RandFloats(r, x[1:2], 0.1, 2), Const: true})
			}
			if r.IntN(2) == 0 {
				n.Attrs["ignore_index"] = IntAttr("ignore_index", 0)
			}
			if op == "SoftmaxCrossEntropyLoss" && r.IntN(2) == 0 {
				n.Outputs = append(n.Outputs, "log_prob")
			}
			cs = append(cs, Case{n, 13, args})
		}
	}
	return cs
}

// diffMatMulPairs are the operand shapes of MatMul: 1-D promotion on
// either side, batch broadcasting up to rank 6, and more than one 64×64
// tile each way.
var diffMatMulPairs = [][2][]int64{{{13}, {13}}, {{1, 13}, {13, 127}}, {{127}, {127, 13}}, {{13, 127}, {127}}, {{13, 1, 13}, {1, 13, 127}},
	{{1, 13, 1, 13, 127}, {13, 1, 127, 1}}, {{1, 1, 13, 1, 1, 13}, {1, 13, 1, 13, 1}}, {{2, 70, 33}, {33, 65}}}

// matMulCases are the cases of MatMul over diffMatMulPairs.
func matMulCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, p := range diffMatMulPairs {
		cs = append(cs, Case{Node(op, []string{"a", "b"}), 13, []Arg{{T: RandFloats(r, p[0], -2, 2)}, {T: RandFloats(r, p[1], -2, 2), Const: i%2 == 1}}})
	}
	return cs
}

// fusedMatMulCases are the cases of the planner's FusedMatMul: the
// diffMatMulPairs whose B is at least 2-D, plus a constant bias along the
// product's last dimension.
func fusedMatMulCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, p := range diffMatMulPairs {
		if len(p[1]) < 2 {
			continue
		}
		bias := RandFloats(r, p[1][len(p[1])-1:], -2, 2)
		cs = append(cs, Case{Node(op, []string{"a", "b", "bias"}), 1,
			[]Arg{{T: RandFloats(r, p[0], -2, 2)}, {T: RandFloats(r, p[1], -2, 2), Const: i%2 == 1}, {T: bias, Const: true}}})
	}
	return cs
}

// gemmCases are the cases of Gemm: sizes 1, 13 and 127, transposes, alpha
// and beta, C absent or broadcast.
func gemmCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for _, mnk := range [][3]int64{{1, 1, 1}, {13, 127, 1}, {127, 13, 13}, {1, 13, 127}} {
		m, nn, k := mnk[0], mnk[1], mnk[2]
		for i, c := range [][]int64{nil, {}, {nn}, {m, 1}, {m, nn}} {
			ta, tb := r.Int64N(2), r.Int64N(2)
			a, b := []int64{m, k}, []int64{k, nn}
			if ta != 0 {
				a = []int64{k, m}
			}
			if tb != 0 {
				b = []int64{nn, k}
			}
			n := Node(op, []string{"a", "b"}, IntAttr("transA", ta), IntAttr("transB", tb), FloatAttr("alpha", 0.75), FloatAttr("beta", -1.5))
			args := []Arg{{T: RandFloats(r, a, -2, 2)}, {T: RandFloats(r, b, -2, 2), Const: i%2 == 0}}
			if c != nil {
				n.Inputs, args = append(n.Inputs, "c"), append(args, Arg{T: RandFloats(r, c, -2, 2)})
			}
			cs = append(cs, Case{n, 13, args})
		}
	}
	return cs
}

// wordGen draws float32 or int64 data: the movement kernels copy words.
func wordGen(r *rand.Rand, i int, s []int64) *graph.Tensor {
	if i%2 == 0 {
		return RandFloats(r, s, -4, 4)
	}
	return EdgeValues(r, graph.Int64, s)
}

// identityCases are the cases of Identity.
func identityCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		cs = append(cs, Case{Node(op, []string{"x"}), 16, []Arg{{T: wordGen(r, i, s)}}})
	}
	return cs
}

// reshapeCases are the cases of Reshape: the dimensions reversed with one
// inferred, and 0 copying the first dimension.
func reshapeCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		shape := []int64{1, 1}
		if len(s) > 0 {
			shape = slices.Clone(s)
			slices.Reverse(shape)
			shape[r.IntN(len(shape))] = -1
		}
		cs = append(cs, Case{Node(op, []string{"x", "s"}), 14, []Arg{{T: wordGen(r, i, s)}, ConstInts(shape...)}})
		if len(s) > 0 {
			cs = append(cs, Case{Node(op, []string{"x", "s"}), 14, []Arg{{T: wordGen(r, i, s)}, ConstInts(0, -1)}})
		}
	}
	return cs
}

// flattenCases are the cases of Flatten at a random axis.
func flattenCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		axis := r.Int64N(int64(2*len(s)+1)) - int64(len(s))
		cs = append(cs, Case{Node(op, []string{"x"}, IntAttr("axis", axis)), 13, []Arg{{T: wordGen(r, i, s)}}})
	}
	return cs
}

// squeezeCases are the cases of Squeeze: some of the axes of size 1, or
// all.
func squeezeCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		var axes []int64
		for k, d := range s {
			if d == 1 && r.IntN(2) == 0 {
				axes = append(axes, int64(k-len(s)*r.IntN(2)))
			}
		}
		if len(axes) == 0 {
			cs = append(cs, Case{Node(op, []string{"x"}), 13, []Arg{{T: wordGen(r, i, s)}}})
			continue
		}
		cs = append(cs, Case{Node(op, []string{"x", "a"}), 13, []Arg{{T: wordGen(r, i, s)}, ConstInts(axes...)}})
	}
	return cs
}

// unsqueezeCases are the cases of Unsqueeze: one or two new axes, counted
// from either end.
func unsqueezeCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(0, 5) {
		out := len(s) + 1 + r.IntN(min(2, 6-len(s)))
		var axes []int64
		for _, a := range r.Perm(out)[:out-len(s)] {
			axes = append(axes, int64(a-out*r.IntN(2)))
		}
		cs = append(cs, Case{Node(op, []string{"x", "a"}), 13, []Arg{{T: wordGen(r, i, s)}, ConstInts(axes...)}})
	}
	return cs
}

// sliceCases are the cases of Slice: random bounds on some axes, negative
// starts, axes and steps, ends clamped past the beginning.
func sliceCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		var starts, ends, axes, steps []int64
		for a, d := range s {
			if r.IntN(3) == 0 && a > 0 {
				continue
			}
			b := r.Int64N(d)
			step := 1 + r.Int64N(3)
			e := b + 1 + r.Int64N(d-b)
			if r.IntN(2) == 0 {
				step, e = -step, r.Int64N(b+1)-1
				if e < 0 {
					e = -d - 1
				}
			}
			if r.IntN(2) == 0 {
				b -= d
			}
			starts, ends, steps = append(starts, b), append(ends, e), append(steps, step)
			axes = append(axes, int64(a-len(s)*r.IntN(2)))
		}
		cs = append(cs, Case{Node(op, []string{"x", "s", "e", "a", "st"}), 13,
			[]Arg{{T: wordGen(r, i, s)}, ConstInts(starts...), ConstInts(ends...), ConstInts(axes...), ConstInts(steps...)}})
	}
	return cs
}

// concatCases are the cases of Concat of two or three inputs along a
// random axis, constant or not.
func concatCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		a := r.IntN(len(s))
		var names []string
		var args []Arg
		for k := range 2 + r.IntN(2) {
			x := slices.Clone(s)
			x[a] = []int64{1, 13}[r.IntN(2)]
			names, args = append(names, fmt.Sprint("x", k)), append(args, Arg{T: wordGen(r, i, x), Const: k == 1})
		}
		cs = append(cs, Case{Node(op, names, IntAttr("axis", int64(a-len(s)*r.IntN(2)))), 13, args})
	}
	return cs
}

// splitCases are the cases of Split into two or three parts of random
// sizes along an axis longer than 1.
func splitCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		var long []int
		for a, d := range s {
			if d > 1 {
				long = append(long, a)
			}
		}
		if long == nil {
			continue
		}
		a := long[r.IntN(len(long))]
		parts := 2 + r.IntN(2)
		cuts := r.Perm(int(s[a]) - 1)[:parts-1]
		slices.Sort(cuts)
		var split []int64
		prev := 0
		for _, c := range append(cuts, int(s[a])-1) {
			split, prev = append(split, int64(c+1-prev)), c+1
		}
		n := Node(op, []string{"x", "sp"}, IntAttr("axis", int64(a)))
		n.Outputs = nil
		for k := range parts {
			n.Outputs = append(n.Outputs, fmt.Sprint("y", k))
		}
		cs = append(cs, Case{n, 13, []Arg{{T: wordGen(r, i, s)}, ConstInts(split...)}})
	}
	return cs
}

// expandCases are the cases of Expand: size-1 axes grown to 13, others
// given as 1, a new leading axis.
func expandCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		shape := slices.Clone(s)
		for k, d := range shape {
			switch {
			case d == 1 && r.IntN(3) == 0:
				shape[k] = 13
			case d != 1 && r.IntN(3) == 0:
				shape[k] = 1
			}
		}
		if len(shape) < 6 && r.IntN(2) == 0 {
			shape = append([]int64{13}, shape...)
		}
		if expandedElems(s, shape) > 1<<16 {
			shape = s
		}
		cs = append(cs, Case{Node(op, []string{"x", "s"}), 13, []Arg{{T: wordGen(r, i, s)}, ConstInts(shape...)}})
	}
	return cs
}

// tileCases are the cases of Tile with repeats of 1 to 3.
func tileCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		reps := make([]int64, len(s))
		elems := graph.NumElements(s)
		for k := range reps {
			reps[k] = 1
			if rep := 1 + r.Int64N(3); elems*rep <= 1<<16 {
				reps[k], elems = rep, elems*rep
			}
		}
		cs = append(cs, Case{Node(op, []string{"x", "r"}), 13, []Arg{{T: wordGen(r, i, s)}, ConstInts(reps...)}})
	}
	return cs
}

// depthToSpaceCases are the cases of DepthToSpace in both modes.
func depthToSpaceCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, c := range []struct {
		x []int64
		b int64
	}{{[]int64{1, 52, 13, 1}, 2}, {[]int64{13, 9, 1, 13}, 3}} {
		for _, mode := range []string{"DCR", "CRD"} {
			cs = append(cs, Case{Node(op, []string{"x"}, IntAttr("blocksize", c.b), StringAttr("mode", mode)), 13, []Arg{{T: wordGen(r, i, c.x)}}})
		}
	}
	return cs
}

// spaceToDepthCases are the cases of SpaceToDepth.
func spaceToDepthCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, c := range []struct {
		x []int64
		b int64
	}{{[]int64{1, 13, 26, 2}, 2}, {[]int64{13, 1, 3, 39}, 3}} {
		cs = append(cs, Case{Node(op, []string{"x"}, IntAttr("blocksize", c.b)), 13, []Arg{{T: wordGen(r, i, c.x)}}})
	}
	return cs
}

// gatherCases are the cases of Gather along a random axis with int32 or
// int64 indices of rank 0 to 2, negative ones included, constant or not.
func gatherCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		a := r.IntN(len(s))
		for k, ind := range [][]int64{{}, {13}, {1, 13}} {
			it := []graph.DType{graph.Int64, graph.Int32}[(i+k)%2]
			cs = append(cs, Case{Node(op, []string{"x", "i"}, IntAttr("axis", int64(a-len(s)*(k%2)))), 13,
				[]Arg{{T: wordGen(r, i, s)}, {T: RandInts(r, it, ind, -s[a], s[a]), Const: k == 1}}})
		}
	}
	return cs
}

// padCases are the cases of Pad in every mode: pads up to 2, crops of 1
// on longer axes, a constant value, on ranks 1 to 6.
func padCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		for _, mode := range []string{"constant", "edge", "reflect", "wrap"} {
			pads := make([]int64, 2*len(s))
			for k := range pads {
				d := s[k%len(s)]
				switch {
				case mode == "reflect" && d == 1:
				case d == 1 || mode == "wrap":
					pads[k] = r.Int64N(min(d, 2) + 1)
				default:
					pads[k] = r.Int64N(4) - 1
				}
			}
			x := wordGen(r, i, s)
			cs = append(cs, Case{Node(op, []string{"x", "p", "v"}, StringAttr("mode", mode)), 19,
				[]Arg{{T: x}, ConstInts(pads...), {T: RandomTensor(x.DType, []int64{}, uint64(i)), Const: true}}})
		}
	}
	return cs
}

// poolDiffCases are the cases of MaxPool and AveragePool over one to three
// spatial axes.
func poolDiffCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for _, c := range []struct {
		x     []int64
		attrs []*graph.Attribute
	}{
		{[]int64{1, 1, 1}, []*graph.Attribute{IntsAttr("kernel_shape", 1)}},
		{[]int64{1, 13, 127}, []*graph.Attribute{IntsAttr("kernel_shape", 3), IntsAttr("strides", 2), IntsAttr("pads", 1, 1)}},
		{[]int64{13, 1, 13, 13}, []*graph.Attribute{IntsAttr("kernel_shape", 3, 2), IntsAttr("strides", 2, 3), IntAttr("ceil_mode", 1)}},
		{[]int64{1, 13, 13, 1}, []*graph.Attribute{IntsAttr("kernel_shape", 3, 1), StringAttr("auto_pad", "SAME_UPPER"), IntsAttr("strides", 2, 1)}},
		{[]int64{1, 1, 13, 1, 13}, []*graph.Attribute{IntsAttr("kernel_shape", 3, 1, 3), IntsAttr("pads", 1, 0, 0, 1, 0, 2)}},
	} {
		n := Node(op, []string{"x"}, c.attrs...)
		if op == "AveragePool" {
			n.Attrs["count_include_pad"] = IntAttr("count_include_pad", r.Int64N(2))
		}
		cs = append(cs, Case{n, 12, []Arg{{T: RandFloats(r, c.x, -4, 4)}}})
	}
	return cs
}

// globalPoolCases are the cases of the global pools: one to four spatial
// axes (GlobalMaxPool sweeps at most three).
func globalPoolCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for _, s := range shapesOfRank(3, 6) {
		cs = append(cs, Case{Node(op, []string{"x"}), 1, []Arg{{T: RandFloats(r, s, -4, 4)}}})
	}
	return cs
}

// reduceCases returns the cases of a Reduce op on inputs uniform in [lo, hi):
// runs of adjacent axes as a constant input (opset 18), or none.
func reduceCases(lo, hi float32) func(string, *rand.Rand) []Case {
	return func(op string, r *rand.Rand) []Case {
		var cs []Case
		for _, c := range []struct{ x, axes []int64 }{
			{[]int64{}, nil}, {[]int64{13}, nil}, {[]int64{127}, []int64{0}}, {[]int64{13, 127}, []int64{1}}, {[]int64{1, 13, 1}, []int64{-2}},
			{[]int64{13, 1, 127, 1}, []int64{1, 2}}, {[]int64{1, 13, 1, 13, 1}, []int64{1, 2, 3}}, {[]int64{13, 1, 1, 13, 1, 13}, []int64{5, 3, 4}},
			{[]int64{13, 1, 1, 13, 1, 13}, nil},
		} {
			n := Node(op, []string{"x"}, IntAttr("keepdims", r.Int64N(2)))
			args := []Arg{{T: RandFloats(r, c.x, lo, hi)}}
			if c.axes != nil {
				n.Inputs, args = append(n.Inputs, "axes"), append(args, ConstInts(c.axes...))
			}
			cs = append(cs, Case{n, 18, args})
		}
		return cs
	}
}

// resizeCases are the cases of Resize: every mode with a random
// coordinate transformation and nearest rounding, scales or sizes.
func resizeCases(op string, r *rand.Rand) []Case {
	coords := []string{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}
	nearests := []string{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
	var cs []Case
	for _, c := range []struct {
		x      []int64
		scales []float32
		sizes  []int64
	}{
		{[]int64{1, 1, 13, 13}, []float32{1, 1, 2, 0.5}, nil},
		{[]int64{13}, []float32{3}, nil},
		{[]int64{127}, nil, []int64{13}},
		{[]int64{1, 13, 1, 127}, []float32{1, 1, 1, 0.3}, nil},
		{[]int64{1, 1, 13, 1, 13}, nil, []int64{1, 1, 26, 1, 7}},
	} {
		for _, mode := range []string{"nearest", "linear", "cubic"} {
			n := ResizeNode(false, c.scales != nil, c.sizes != nil, map[string]any{"mode": mode,
				"coordinate_transformation_mode": coords[r.IntN(len(coords))], "nearest_mode": nearests[r.IntN(len(nearests))]})
			args := []Arg{{T: RandFloats(r, c.x, -1, 1)}, {}, {}, {}}
			if c.scales != nil {
				args[2] = ConstFloats(c.scales...)
			} else {
				args[3] = ConstInts(c.sizes...)
			}
			cs = append(cs, Case{n, 13, args})
		}
	}
	return cs
}

// softmaxCases are the cases of Softmax and LogSoftmax: a random axis,
// single-axis (opset 13) and coerced to 2-D (opset 11).
func softmaxCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(1, 6) {
		axis := r.Int64N(int64(2*len(s))) - int64(len(s))
		cs = append(cs, Case{Node(op, []string{"x"}, IntAttr("axis", axis)), []int64{13, 11}[i%2], []Arg{{T: RandFloats(r, s, -8, 8)}}})
	}
	return cs
}

// transposeCases are the cases of Transpose: a random permutation of
// each shape, and the default one.
func transposeCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		var perm []int64
		for _, p := range r.Perm(len(s)) {
			perm = append(perm, int64(p))
		}
		cs = append(cs, Case{Node(op, []string{"x"}, IntsAttr("perm", perm...)), 13, []Arg{{T: wordGen(r, i, s)}}})
		if len(s) == 3 {
			cs = append(cs, Case{Node(op, []string{"x"}), 13, []Arg{{T: wordGen(r, i, s)}}})
		}
	}
	return cs
}

// triluCases are the cases of Trilu, upper and lower, k absent, constant
// or not.
func triluCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range shapesOfRank(2, 6) {
		n := Node(op, []string{"x"}, IntAttr("upper", int64(i%2)))
		args := []Arg{{T: wordGen(r, i, s)}}
		if i%3 != 0 {
			n.Inputs, args = append(n.Inputs, "k"), append(args, Arg{T: scalar(graph.Int64, float64(r.IntN(11)-5)), Const: i%3 == 1})
		}
		cs = append(cs, Case{n, 14, args})
	}
	return cs
}

// clipCases are the cases of Clip: attribute bounds (opset 6) and
// optional bounds as inputs, constant or not (opset 13).
func clipCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, s := range diffShapes {
		x := RandFloats(r, s, -4, 4)
		if i%2 == 1 {
			x = EdgeValues(r, graph.Float, s) // NaN stays NaN
		}
		if i%4 == 0 {
			cs = append(cs, Case{Node(op, []string{"x"}, FloatAttr("min", -1), FloatAttr("max", 2)), 6, []Arg{{T: x}}})
			continue
		}
		names := [][]string{{"x", "lo", "hi"}, {"x", "lo"}, {"x", "", "hi"}}[i%3]
		args := []Arg{{T: x}, {T: scalar(graph.Float, -1.5), Const: true}, {T: scalar(graph.Float, 0.5)}}
		if names[1] == "" {
			args[1] = Arg{}
		}
		cs = append(cs, Case{Node(op, names), 13, args[:len(names)]})
	}
	return cs
}

// Table lists the ops devices lower, each with its cases (backend/vulkan
// checks that it has every op the Vulkan kernels lower, and no other).
var Table = []Op{
	// unary.comp; Neg and Abs also on intops.comp.
	{"", "Relu", unaryCases(20, []gen{floats(-4, 4), edges(graph.Float)})},
	{"", "Sigmoid", unaryCases(20, []gen{floats(-8, 8)})},
	{"", "Tanh", unaryCases(20, []gen{floats(-4, 4), edges(graph.Float)})},
	{"", "Exp", unaryCases(20, []gen{floats(-8, 8)})},
	{"", "Abs", unaryCases(20, []gen{floats(-4, 4), edges(graph.Int32), edges(graph.Int64)})},
	{"", "Neg", unaryCases(20, []gen{floats(-4, 4), edges(graph.Int32), edges(graph.Int64)})},
	{"", "Sqrt", unaryCases(20, []gen{floats(0, 10)})},
	{"", "Erf", unaryCases(20, []gen{floats(-3, 3)})},
	{"", "HardSwish", unaryCases(20, []gen{floats(-5, 5)})},
	{"", "LeakyRelu", unaryCases(20, []gen{floats(-4, 4)}, FloatAttr("alpha", 0.3))},
	{"", "Elu", unaryCases(20, []gen{floats(-4, 4)}, FloatAttr("alpha", 0.7))},
	{"", "Selu", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "HardSigmoid", unaryCases(20, []gen{floats(-5, 5), edges(graph.Float)}, FloatAttr("alpha", 0.3), FloatAttr("beta", 0.4))},
	{"", "Log", unaryCases(20, []gen{floats(0.01, 10)})},
	{"", "Reciprocal", unaryCases(20, []gen{divisors})},
	{"", "Floor", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Ceil", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Softplus", unaryCases(20, []gen{floats(-8, 8)})},
	{"", "Softsign", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Sin", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Cos", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Gelu", unaryCases(20, []gen{floats(-5, 5)}, StringAttr("approximate", "tanh"))},
	{"", "Mish", unaryCases(20, []gen{floats(-8, 8)})},
	{"", "Swish", unaryCases(24, []gen{floats(-8, 8)}, FloatAttr("alpha", 0.6))},
	{"", "Round", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Tan", unaryCases(20, []gen{floats(-1.5, 1.5)})},
	{"", "Asin", unaryCases(20, []gen{floats(-1, 1)})},
	{"", "Acos", unaryCases(20, []gen{floats(-1, 1)})},
	{"", "Atan", unaryCases(20, []gen{floats(-8, 8), edges(graph.Float)})},
	{"", "Sinh", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Cosh", unaryCases(20, []gen{floats(-4, 4)})},
	{"", "Asinh", unaryCases(20, []gen{floats(-8, 8), edges(graph.Float)})},
	{"", "Acosh", unaryCases(20, []gen{floats(1, 10), edges(graph.Float)})},
	{"", "Atanh", unaryCases(20, []gen{floats(-0.99, 0.99)})},
	{"", "ThresholdedRelu", unaryCases(20, []gen{floats(-4, 4)}, FloatAttr("alpha", 0.5))},
	{"", "Celu", unaryCases(20, []gen{floats(-4, 4)}, FloatAttr("alpha", 0.6))},
	{"", "Shrink", unaryCases(20, []gen{floats(-4, 4)}, FloatAttr("lambd", 1.5), FloatAttr("bias", 0.3))},
	{"", "Sign", unaryCases(13, []gen{edges(graph.Float), edges(graph.Int32), edges(graph.Int64)})},
	{"", "Clip", clipCases},

	// binary.comp on float32, intops.comp on the integer types.
	{"", "Add", binaryCases(14, append([]gen2{same(floats(-4, 4))}, intPairs(false)...))},
	{"", "Sub", binaryCases(14, append([]gen2{same(floats(-4, 4))}, intPairs(false)...))},
	{"", "Mul", binaryCases(14, append([]gen2{same(floats(-4, 4))}, intPairs(false)...))},
	{"", "Div", binaryCases(14, append([]gen2{{floats(-4, 4), divisors}}, intPairs(true)...))},
	{"", "Pow", binaryCases(15, []gen2{{floats(0.1, 4), floats(-3, 3)}, {floats(-4, 4), wholes}, same(edges(graph.Float))})},
	{"", "Max", binaryCases(13, append([]gen2{same(floats(-4, 4)), same(edges(graph.Float))}, intPairs(false)...))},
	{"", "Min", binaryCases(13, append([]gen2{same(floats(-4, 4)), same(edges(graph.Float))}, intPairs(false)...))},
	{"", "PRelu", preluCases},
	{"", "Mod", modCases},
	{"", "BitShift", bitShiftCases},

	// predicate.comp.
	{"", "Equal", compareCases},
	{"", "Less", compareCases},
	{"", "LessOrEqual", compareCases},
	{"", "Greater", compareCases},
	{"", "GreaterOrEqual", compareCases},
	{"", "IsNaN", unaryCases(13, []gen{edges(graph.Float)})},
	{"", "IsInf", isInfCases},
	{"", "And", binaryCases(7, []gen2{same(edges(graph.Bool))})},
	{"", "Or", binaryCases(7, []gen2{same(edges(graph.Bool))})},
	{"", "Xor", binaryCases(7, []gen2{same(edges(graph.Bool))})},
	{"", "Not", unaryCases(1, []gen{edges(graph.Bool)})},
	{"", "Where", whereCases},

	{"", "Cast", castCases},
	{"", "CastLike", castCases},
	{"", "ArgMax", argCases},
	{"", "ArgMin", argCases},
	{"", "BatchNormalization", batchNormCases},
	{"", "Conv", convDiffCases},
	{ops.FusedDomain, "FusedConv", convDiffCases},
	{"", "ConvTranspose", convTransposeCases},
	{"", "CumSum", cumSumCases},
	{"", "GatherElements", gatherElementsCases},
	{"", "LayerNormalization", layerNormCases},
	{"", "RMSNormalization", transformerCases},
	{"", "Attention", attentionCases},
	{ops.FusedDomain, "ScaledDotProductAttention", sdpaCases},
	{"", "RotaryEmbedding", transformerCases},
	{"", "TensorScatter", transformerCases},
	{ops.FusedDomain, "LayerNormalization", fusedLayerNormCases},
	{"", "NegativeLogLikelihoodLoss", lossCases},
	{"", "SoftmaxCrossEntropyLoss", lossCases},
	{"", "MatMul", matMulCases},
	{"", "DynamicQuantizeLinear", dynamicQuantizeCases},
	{"", "ConvInteger", convIntegerCases},
	{"", "MatMulInteger", matMulIntegerCases},
	{"", "QLinearConv", qlinearConvCases},
	{"", "QLinearMatMul", qlinearMatMulCases},
	{"", "QuantizeLinear", qdqCases},
	{"", "DequantizeLinear", qdqCases},
	{ops.FusedDomain, "FusedMatMul", fusedMatMulCases},
	{"", "Gemm", gemmCases},

	// copy.comp and gather.comp.
	{"", "Identity", identityCases},
	{"", "Reshape", reshapeCases},
	{"", "Flatten", flattenCases},
	{"", "Squeeze", squeezeCases},
	{"", "Unsqueeze", unsqueezeCases},
	{"", "Slice", sliceCases},
	{"", "Concat", concatCases},
	{"", "Split", splitCases},
	{"", "Expand", expandCases},
	{"", "Tile", tileCases},
	{"", "DepthToSpace", depthToSpaceCases},
	{"", "SpaceToDepth", spaceToDepthCases},
	{"", "Gather", gatherCases},
	{"", "Pad", padCases},
	{"", "Transpose", transposeCases},
	{"", "Trilu", triluCases},

	{"", "MaxPool", poolDiffCases},
	{"", "AveragePool", poolDiffCases},
	{"", "GlobalMaxPool", globalPoolCases},
	{"", "GlobalAveragePool", globalPoolCases},
	{"", "ReduceSum", reduceCases(-4, 4)},
	{"", "ReduceMean", reduceCases(-4, 4)},
	{"", "ReduceMax", reduceCases(-4, 4)},
	{"", "ReduceMin", reduceCases(-4, 4)},
	{"", "ReduceL1", reduceCases(-4, 4)},
	{"", "ReduceL2", reduceCases(-4, 4)},
	{"", "ReduceLogSum", reduceCases(0.1, 2)},
	{"", "ReduceLogSumExp", reduceCases(-4, 4)},
	{"", "ReduceProd", reduceCases(0.9, 1.1)},
	{"", "ReduceSumSquare", reduceCases(-4, 4)},
	{"", "Resize", resizeCases},
	{"", "Softmax", softmaxCases},
	{"", "LogSoftmax", softmaxCases},
}

// preluCases are the cases of PRelu: slopes that broadcast to X.
func preluCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for i, p := range [][2][]int64{{{}, {}}, {{13}, {1}}, {{13, 127}, {127}}, {{1, 13, 1, 13, 1}, {13, 1}}, {{13, 1, 1, 13, 1, 13}, {13}}} {
		cs = append(cs, Case{Node(op, []string{"x", "slope"}), 16, []Arg{{T: RandFloats(r, p[0], -4, 4)}, {T: RandFloats(r, p[1], -1, 1), Const: i%2 == 1}}})
	}
	return cs
}

// bitShiftCases are the cases of BitShift both ways on uint32 and uint64,
// shifts below the type's width.
func bitShiftCases(op string, r *rand.Rand) []Case {
	var cs []Case
	for _, dir := range []string{"LEFT", "RIGHT"} {
		for _, dt := range []graph.DType{graph.Uint32, graph.Uint64} {
			cs = append(cs, binaryCases(11, []gen2{{edges(dt), shifts(dt)}}, StringAttr("direction", dir))(op, r)...)
		}
	}
	return cs
}

// expandedElems returns the elements of Expand's output for input shape a
// and shape b: numpy broadcasting of the two.
func expandedElems(a, b []int64) int64 {
	n := int64(1)
	for i := 1; i <= max(len(a), len(b)); i++ {
		d := int64(1)
		if i <= len(a) {
			d = a[len(a)-i]
		}
		if i <= len(b) {
			d = max(d, b[len(b)-i])
		}
		n *= d
	}
	return n
}
