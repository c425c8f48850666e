package ops

import (
	"math"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// TestFoldWeightCasts folds the Casts that widen constant float16 and
// bfloat16 weights, checks every widened value against its float16 or
// bfloat16 bits decoded by hand (sign, exponent, fraction) and that
// FromFloat16 tells the float32 weights widened from float16, and leaves
// alone a narrowing Cast, a Cast of a graph input with a default, a Cast
// writing a graph output, and a weight still read elsewhere.
func TestFoldWeightCasts(t *testing.T) {
	// Every float16 bit pattern: normals, subnormals, zeros, infinities
	// and NaNs.
	h := graph.NewTensor(graph.Float16, []int64{1 << 16})
	for i := range graph.View[uint16](h) {
		graph.View[uint16](h)[i] = uint16(i)
	}
	bf := graph.NewTensor(graph.BFloat16, []int64{3})
	copy(graph.View[uint16](bf), []uint16{0x3f80, 0xc0a0, 0x0001}) // 1, -5, the smallest subnormal
	f := graph.NewTensor(graph.Float, []int64{2})
	copy(graph.View[float32](f), []float32{1.5, -0.1})
	cast := func(name, in, out string, to graph.DType) *graph.Node {
		return &graph.Node{Name: name, OpType: "Cast", Inputs: []string{in}, Outputs: []string{out},
			Attrs: map[string]*graph.Attribute{"to": {Name: "to", Type: graph.AttrInt, I: int64(to)}}}
	}
	g := graph.NewGraph("casts")
	g.Inputs = []*graph.ValueInfo{{Name: "x"}, {Name: "d"}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "out"}}
	g.Initializers = map[string]*graph.Tensor{"h": h, "bf": bf, "f": f, "d": h, "shared": bf}
	g.Nodes = []*graph.Node{
		cast("h_cast", "h", "h32", graph.Float),
		cast("bf_cast", "bf", "bf64", graph.Double),
		cast("f_cast", "f", "f64", graph.Double),
		cast("narrow", "f", "f16", graph.Float16),
		cast("input_cast", "d", "d32", graph.Float),
		cast("output_cast", "bf", "out", graph.Float),
		cast("shared_cast", "shared", "shared32", graph.Float),
		{Name: "use", OpType: "Sum", Inputs: []string{"x", "h32", "bf64", "f64", "f16", "d32", "shared32", "shared"}, Outputs: []string{"y"}},
	}
	m := &graph.Model{Graph: g, Opsets: map[string]int64{"": 17}}
	if n := FoldWeightCasts(m); n != 4 {
		t.Fatalf("FoldWeightCasts removed %d nodes, want 4", n)
	}
	var left []string
	for _, n := range g.Nodes {
		left = append(left, n.Name)
	}
	if want := []string{"narrow", "input_cast", "output_cast", "use"}; !slices.Equal(left, want) {
		t.Errorf("nodes left %v, want %v", left, want)
	}
	if g.Initializers["h"] != nil {
		t.Error("initializer h, read by nothing any more, is kept")
	}
	if g.Initializers["f"] == nil || g.Initializers["bf"] == nil || g.Initializers["shared"] == nil || g.Initializers["d"] == nil {
		t.Error("an initializer still read was dropped")
	}
	h32 := g.Initializers["h32"]
	if h32.DType != graph.Float || len(h32.Shape) != 1 || h32.Shape[0] != 1<<16 {
		t.Fatalf("h32 is %s%v", h32.DType, h32.Shape)
	}
	for i, got := range graph.View[float32](h32) {
		want := decodeHalf(uint16(i))
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("float16 %#04x widened to %v, want %v", i, got, want)
		}
	}
	if !FromFloat16(h32) || FromFloat16(g.Initializers["shared32"]) || FromFloat16(f) {
		t.Error("FromFloat16 tells the float32 tensors widened from float16 wrongly")
	}
	if got := graph.View[float64](g.Initializers["bf64"]); got[0] != 1 || got[1] != -5 || got[2] != math.Ldexp(1, -133) {
		t.Errorf("bfloat16 widened to %v", got)
	}
	if got := graph.View[float64](g.Initializers["f64"]); got[0] != 1.5 || got[1] != float64(float32(-0.1)) {
		t.Errorf("float32 widened to %v", got)
	}
	if got := graph.View[float32](g.Initializers["shared32"]); got[0] != 1 || got[1] != -5 {
		t.Errorf("shared widened to %v", got)
	}
}

// decodeHalf decodes IEEE 754 binary16 bits from their fields.
func decodeHalf(b uint16) float32 {
	sign := 1.0
	if b>>15 != 0 {
		sign = -1
	}
	exp, frac := int(b>>10&0x1f), float64(b&0x3ff)
	switch exp {
	case 0:
		return float32(sign * math.Ldexp(frac, -24))
	case 0x1f:
		if frac != 0 {
			return float32(math.NaN())
		}
		return float32(sign * math.Inf(1))
	}
	return float32(sign * math.Ldexp(1+frac/1024, exp-15))
}
