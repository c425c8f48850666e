package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func TestReshape(t *testing.T) {
	x := mvIota(2, 3, 4)
	mvRun(t, []mvCase{
		{name: "infer", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 4, -1)},
			want: []*graph.Tensor{mvIota(4, 6)}},
		{name: "copy zero", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(3), 0, 0, -1)},
			want: []*graph.Tensor{mvIota(2, 3, 4)}},
		{name: "to scalar", op: "Reshape", opset: 13, in: []*graph.Tensor{mvF32(mvShape(1, 1), 7), mvI64(mvShape(0))},
			want: []*graph.Tensor{mvF32(nil, 7)}},
		{name: "attribute form", op: "Reshape", opset: 1, attrs: []*graph.Attribute{mvInts("shape", 6, -1)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvIota(6, 4)}},
		{name: "allowzero", op: "Reshape", opset: 14, attrs: []*graph.Attribute{mvInt("allowzero", 1)},
			in:   []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 3)), mvI64(mvShape(2), 3, 0)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(3, 0))}},
		{name: "allowzero ignored before 14", op: "Reshape", opset: 13, attrs: []*graph.Attribute{mvInt("allowzero", 1)},
			in: []*graph.Tensor{x, mvI64(mvShape(2), 0, -1)}, want: []*graph.Tensor{mvIota(2, 12)}},
		{name: "strings", op: "Reshape", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(2, 2), "a", "b", "c", "d"), mvI64(mvShape(1), -1)},
			want: []*graph.Tensor{mvStrs(mvShape(4), "a", "b", "c", "d")}},
		{name: "int4", op: "Reshape", opset: 21, in: []*graph.Tensor{mvInt4(mvShape(3), 1, -2, 7), mvI64(mvShape(2), 1, 3)},
			want: []*graph.Tensor{mvInt4(mvShape(1, 3), 1, -2, 7)}},
		{name: "two -1", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), -1, -1)}, err: true},
		{name: "bad count", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 5, 5)}, err: true},
		{name: "indivisible", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 5, -1)}, err: true},
		{name: "copy past rank", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(4), 2, 3, 4, 0)}, err: true},
		{name: "negative", op: "Reshape", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), -2, 12)}, err: true},
		{name: "zero and -1", op: "Reshape", opset: 14, attrs: []*graph.Attribute{mvInt("allowzero", 1)},
			in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 3)), mvI64(mvShape(2), 0, -1)}, err: true},
		{name: "missing shape", op: "Reshape", opset: 13, in: []*graph.Tensor{x}, err: true},
	})
}

func TestFlatten(t *testing.T) {
	x := mvIota(2, 3, 4)
	mvRun(t, []mvCase{
		{name: "default", op: "Flatten", opset: 13, in: []*graph.Tensor{x}, want: []*graph.Tensor{mvIota(2, 12)}},
		{name: "axis 0", op: "Flatten", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvIota(1, 24)}},
		{name: "axis rank", op: "Flatten", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 3)}, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvIota(24, 1)}},
		{name: "negative", op: "Flatten", opset: 13, attrs: []*graph.Attribute{mvInt("axis", -1)}, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvIota(6, 4)}},
		{name: "scalar", op: "Flatten", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{mvF32(nil, 5)},
			want: []*graph.Tensor{mvF32(mvShape(1, 1), 5)}},
		{name: "out of range", op: "Flatten", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 4)}, in: []*graph.Tensor{x}, err: true},
	})
}

func TestSqueezeUnsqueeze(t *testing.T) {
	x := mvIota(1, 3, 1, 2)
	mvRun(t, []mvCase{
		{name: "squeeze all", op: "Squeeze", opset: 13, in: []*graph.Tensor{x}, want: []*graph.Tensor{mvIota(3, 2)}},
		{name: "squeeze empty axes", op: "Squeeze", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(0))}, want: []*graph.Tensor{mvIota(3, 2)}},
		{name: "squeeze input", op: "Squeeze", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), -2)},
			want: []*graph.Tensor{mvIota(1, 3, 2)}},
		{name: "squeeze to scalar", op: "Squeeze", opset: 13, in: []*graph.Tensor{mvF32(mvShape(1, 1), 4)},
			want: []*graph.Tensor{mvF32(nil, 4)}},
		{name: "squeeze non-1", op: "Squeeze", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), 1)}, err: true},
		{name: "squeeze repeated", op: "Squeeze", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 0, -4)}, err: true},
		{name: "squeeze out of range", op: "Squeeze", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), 4)}, err: true},
		{name: "unsqueeze input", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{mvIota(3, 2), mvI64(mvShape(2), 3, 0)},
			want: []*graph.Tensor{mvIota(1, 3, 2, 1)}},
		{name: "unsqueeze negative", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{mvIota(3, 2), mvI64(mvShape(1), -1)},
			want: []*graph.Tensor{mvIota(3, 2, 1)}},
		{name: "unsqueeze scalar", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{mvF32(nil, 2), mvI64(mvShape(1), 0)},
			want: []*graph.Tensor{mvF32(mvShape(1), 2)}},
		{name: "unsqueeze empty", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0)), mvI64(mvShape(1), 0)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(1, 0))}},
		{name: "unsqueeze repeated", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{mvIota(3), mvI64(mvShape(2), 0, -3)}, err: true},
		{name: "unsqueeze out of range", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{mvIota(3), mvI64(mvShape(1), 2)}, err: true},
		{name: "unsqueeze no axes", op: "Unsqueeze", opset: 13, in: []*graph.Tensor{mvIota(3)}, err: true},
	})
}

func TestShapeSize(t *testing.T) {
	x := graph.NewTensor(graph.Float, mvShape(2, 3, 0, 5))
	mvRun(t, []mvCase{
		{name: "shape", op: "Shape", opset: 13, in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI64(mvShape(4), 2, 3, 0, 5)}},
		{name: "start end", op: "Shape", opset: 15, attrs: []*graph.Attribute{mvInt("start", 1), mvInt("end", -1)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI64(mvShape(2), 3, 0)}},
		{name: "clamped", op: "Shape", opset: 15, attrs: []*graph.Attribute{mvInt("start", -10), mvInt("end", 10)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI64(mvShape(4), 2, 3, 0, 5)}},
		{name: "start past end", op: "Shape", opset: 15, attrs: []*graph.Attribute{mvInt("start", 3), mvInt("end", 1)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI64(mvShape(0))}},
		{name: "attributes ignored before 15", op: "Shape", opset: 13, attrs: []*graph.Attribute{mvInt("start", 3)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI64(mvShape(4), 2, 3, 0, 5)}},
		{name: "scalar", op: "Shape", opset: 15, in: []*graph.Tensor{mvF32(nil, 1)}, want: []*graph.Tensor{mvI64(mvShape(0))}},
		{name: "size", op: "Size", opset: 13, in: []*graph.Tensor{mvIota(2, 3)}, want: []*graph.Tensor{mvI64(nil, 6)}},
		{name: "size empty", op: "Size", opset: 13, in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI64(nil, 0)}},
		{name: "size scalar", op: "Size", opset: 13, in: []*graph.Tensor{mvStrs(nil, "s")}, want: []*graph.Tensor{mvI64(nil, 1)}},
	})
}

func TestSubByteRoundTrip(t *testing.T) {
	for _, bits := range []int{2, 4} {
		elems := []byte{1, 0, 3, 2, 1, 1, 0, 3, 2}
		packed := make([]byte, (len(elems)*bits+7)/8)
		packSubByte(packed, elems, bits)
		got := unpackSubByte(packed, bits, int64(len(elems)))
		for i := range elems {
			if got[i] != elems[i] {
				t.Fatalf("%d bits: element %d is %d, want %d", bits, i, got[i], elems[i])
			}
		}
	}
	// The first element sits in the low bits.
	p := make([]byte, 1)
	packSubByte(p, []byte{0x3, 0xa}, 4)
	if p[0] != 0xa3 {
		t.Fatalf("packed byte %#x, want 0xa3", p[0])
	}
}

func TestGatherTablesFill(t *testing.T) {
	src := cells{b: []byte{1, 2, 3, 4, 5, 6}, size: 1}
	dst := cells{b: make([]byte, 8), size: 1}
	// A 2x4 window over the 2x3 source shifted one column left, padded
	// with 9 where it leaves the source.
	gatherTables(nil, dst, src, mvShape(2, 4), [][]int64{{0, 3}, {outside, 0, 1, 2}}, cells{b: []byte{9}, size: 1})
	want := []byte{9, 1, 2, 3, 9, 4, 5, 6}
	if string(dst.b) != string(want) {
		t.Fatalf("got %v, want %v", dst.b, want)
	}
	// A whole row outside.
	gatherTables(nil, dst, src, mvShape(2, 4), [][]int64{{outside, 3}, {0, 1, 2, 0}}, cells{b: []byte{7}, size: 1})
	want = []byte{7, 7, 7, 7, 4, 5, 6, 4}
	if string(dst.b) != string(want) {
		t.Fatalf("got %v, want %v", dst.b, want)
	}
}

// TestHostileInputs feeds values that overflow sizes or offsets; each must
// be refused with an error, not a panic.
func TestHostileInputs(t *testing.T) {
	const big = math.MaxInt64
	x := mvIota(2, 3)
	ints := func(v ...int64) *graph.Tensor { return mvI64(mvShape(int64(len(v))), v...) }
	mvRun(t, []mvCase{
		{name: "reshape overflow", op: "Reshape", opset: 13, in: []*graph.Tensor{x, ints(1<<32, 1<<32, 0, 6)}, err: true},
		{name: "split overflow", op: "Split", opset: 13, in: []*graph.Tensor{x, ints(big, big, 4)}, nout: 3, err: true},
		{name: "tile too large", op: "Tile", opset: 13, in: []*graph.Tensor{x, ints(1<<31, 1<<31)}, err: true},
		{name: "expand too large", op: "Expand", opset: 13, in: []*graph.Tensor{mvF32(nil, 1), ints(big, big)}, err: true},
		{name: "constant of shape too large", op: "ConstantOfShape", opset: 9, in: []*graph.Tensor{ints(1<<40, 1<<40)}, err: true},
		{name: "range too long", op: "Range", opset: 11, in: []*graph.Tensor{mvI64(nil, math.MinInt64), mvI64(nil, big), mvI64(nil, 1)}, err: true},
		{name: "float range to infinity", op: "Range", opset: 11,
			in: []*graph.Tensor{mvF32(nil, 0), mvF32(nil, float32(math.Inf(1))), mvF32(nil, 1)}, err: true},
		{name: "float range NaN", op: "Range", opset: 11,
			in: []*graph.Tensor{mvF32(nil, 0), mvF32(nil, float32(math.NaN())), mvF32(nil, 1)}, err: true},
		{name: "pad too large", op: "Pad", opset: 13, in: []*graph.Tensor{x, ints(big, 0, big, 0)}, err: true},
		{name: "pad underflow", op: "Pad", opset: 13, in: []*graph.Tensor{x, ints(math.MinInt64, 0, 0, 0)}, err: true},
		{name: "one-hot too deep", op: "OneHot", opset: 11, in: []*graph.Tensor{ints(0, 1), mvI64(nil, 1<<62), mvF32(mvShape(2), 0, 1)}, err: true},
		{name: "depth-to-space blocksize", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{mvInt("blocksize", 1<<41)},
			in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(1, 0, 1, 1))}, err: true},
		{name: "space-to-depth blocksize", op: "SpaceToDepth", opset: 13, attrs: []*graph.Attribute{mvInt("blocksize", 1<<32)},
			in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(1, 1<<40, 0, 0))}, err: true},
		{name: "resize scale", op: "Resize", opset: 13, in: []*graph.Tensor{x, nil, mvF32(mvShape(2), 1, 1e30)}, err: true},
		{name: "resize sizes", op: "Resize", opset: 13, in: []*graph.Tensor{x, nil, nil, ints(big, big)}, err: true},
		{name: "resize aspect", op: "Resize", opset: 18, attrs: []*graph.Attribute{mvStr("keep_aspect_ratio_policy", "not_smaller")},
			in: []*graph.Tensor{x, nil, nil, ints(big, 1)}, err: true},
		{name: "gather huge index", op: "Gather", opset: 13, in: []*graph.Tensor{x, ints(math.MinInt64)}, err: true},
		{name: "gathernd huge index", op: "GatherND", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1, 2), big, 0)}, err: true},
	})
	// Extreme but valid arguments.
	mvRun(t, []mvCase{
		{name: "slice huge step", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0), ints(big), ints(1), ints(big)},
			want: []*graph.Tensor{mvF32(mvShape(2, 1), 0, 3)}},
		{name: "slice most negative step", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(-1), ints(math.MinInt64), ints(1), ints(math.MinInt64)},
			want: []*graph.Tensor{mvF32(mvShape(2, 1), 2, 5)}},
		{name: "trilu huge k", op: "Trilu", opset: 14, in: []*graph.Tensor{x, mvI64(nil, big)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(2, 3))}},
		{name: "trilu most negative k", op: "Trilu", opset: 14, in: []*graph.Tensor{x, mvI64(nil, math.MinInt64)}, want: []*graph.Tensor{x}},
		{name: "one-hot huge index", op: "OneHot", opset: 11, in: []*graph.Tensor{ints(big, math.MinInt64), mvI64(nil, 2), mvF32(mvShape(2), 0, 1)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 0, 0, 0, 0)}},
	})
}

// typedValue is a tensor value whose elements the host cannot read, as a
// tensor a device keeps: only its type.
type typedValue struct{ t *graph.Type }

func (v typedValue) ValueType() *graph.Type { return v.t }

// TestShapeSizeReadTypes runs Shape and Size on a value that is no host
// tensor: they read its type alone (ops.TypeOnly).
func TestShapeSizeReadTypes(t *testing.T) {
	x := typedValue{graph.TensorType(graph.Float, graph.ShapeOf(1, 8, 5, 64))}
	for _, tc := range []struct {
		op   string
		want *graph.Tensor
	}{{"Shape", mvI64(mvShape(4), 1, 8, 5, 64)}, {"Size", mvI64(nil, 2560)}} {
		n := &graph.Node{Name: "n", OpType: tc.op, Inputs: []string{"x"}, Outputs: []string{"y"}}
		c := &Call{Node: n, Opset: 15, In: []graph.Value{x}, Out: make([]graph.Value, 1)}
		if err := Lookup(graph.DefaultDomain, tc.op)(c); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		mvCheck(t, tc.op, c.Out[0].(*graph.Tensor), tc.want, 0)
	}
	if !ops.Has(graph.DefaultDomain, "Shape", ops.TypeOnly) || !ops.Has(graph.DefaultDomain, "Size", ops.TypeOnly) {
		t.Error("Shape and Size are not marked ops.TypeOnly")
	}
}
