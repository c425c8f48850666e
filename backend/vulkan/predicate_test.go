package vulkan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// edgeValues returns a tensor of dt and shape mixing small values (so that
// comparisons find equal pairs) with the type's edge values: extremes,
// int64 values that differ in one 32-bit word only, and for float32 -0,
// ±inf and NaN.
func edgeValues(r *rand.Rand, dt graph.DType, shape []int64) *graph.Tensor {
	x := graph.NewTensor(dt, shape)
	n := int(graph.NumElements(shape))
	pick := func(edges []int64) int64 {
		if r.IntN(4) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return r.Int64N(7) - 3
	}
	for i := range n {
		switch dt {
		case graph.Float:
			edges := []float32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0.5, -1e30, 3e38}
			v := float32(r.IntN(7) - 3)
			if r.IntN(4) == 0 {
				v = edges[r.IntN(len(edges))]
			}
			graph.View[float32](x)[i] = v
		case graph.Int32:
			graph.View[int32](x)[i] = int32(pick([]int64{math.MinInt32, math.MaxInt32, math.MinInt32 + 1, 1 << 20}))
		case graph.Int64:
			graph.View[int64](x)[i] = pick([]int64{math.MinInt64, math.MaxInt64, 1 << 32, -(1 << 32), 1<<32 + 5, -(1<<32 + 5), math.MaxUint32, -math.MaxUint32, math.MinInt64 + 1})
		case graph.Uint32:
			graph.View[uint32](x)[i] = uint32(pick([]int64{math.MaxUint32, 1 << 31, 1<<31 - 1, 40}) + 3)
		case graph.Uint64:
			graph.View[uint64](x)[i] = uint64(pick([]int64{-1, math.MinInt64, 1 << 32, math.MaxUint32, 64, 63, 31, 33}) + 3)
		case graph.Bool:
			x.Data[i] = byte(r.IntN(2))
		case graph.Uint8, graph.Int8:
			x.Data[i] = byte(pick([]int64{0, 127, 128, 255, 1}))
		default:
			panic("edgeValues: " + dt.String())
		}
	}
	return x
}

// TestCompareMatchesCPU checks the comparisons on float32, int32, int64,
// uint8 and int8 and Equal on bool over broadcast shapes.
func TestCompareMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(5, 6))
	for _, op := range []string{"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"} {
		for _, dt := range []graph.DType{graph.Float, graph.Int32, graph.Int64, graph.Uint8, graph.Int8, graph.Bool} {
			if dt == graph.Bool && op != "Equal" {
				continue
			}
			for _, s := range broadcastPairs {
				checkMove(t, d, opNode(op, []string{"a", "b"}), 13,
					arg{t: edgeValues(r, dt, s[0])}, arg{t: edgeValues(r, dt, s[1]), konst: len(s[1]) == 0})
			}
		}
	}
}

// TestLogicMatchesCPU checks And, Or, Xor and Not over broadcast shapes.
func TestLogicMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range broadcastPairs {
		for _, op := range []string{"And", "Or", "Xor"} {
			checkMove(t, d, opNode(op, []string{"a", "b"}), 7, arg{t: edgeValues(r, graph.Bool, s[0])}, arg{t: edgeValues(r, graph.Bool, s[1])})
		}
		checkMove(t, d, opNode("Not", []string{"a"}), 1, arg{t: edgeValues(r, graph.Bool, s[0])})
	}
}

// TestIsNaNIsInfMatchesCPU checks IsNaN and IsInf with each pair of its
// detect attributes.
func TestIsNaNIsInfMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range [][]int64{{}, {1}, {13}, {127}, {2, 3, 5, 7}, {1, 2, 1, 3, 1, 5}} {
		x := edgeValues(r, graph.Float, s)
		checkMove(t, d, opNode("IsNaN", []string{"x"}), 13, arg{t: x})
		for _, pos := range []int64{0, 1} {
			for _, neg := range []int64{0, 1} {
				checkMove(t, d, opNode("IsInf", []string{"x"}, intAttr("detect_positive", pos), intAttr("detect_negative", neg)), 20, arg{t: x})
			}
		}
	}
}

// TestBroadcastPush checks the dropping of size-1 dimensions and the
// merging of contiguous ones.
func TestBroadcastPush(t *testing.T) {
	for _, c := range []struct {
		out, a, b    []int64
		dims, sa, sb []uint32
	}{
		{[]int64{}, []int64{}, []int64{}, nil, nil, nil},
		{[]int64{2, 3, 4}, []int64{2, 3, 4}, []int64{2, 3, 4}, []uint32{24}, []uint32{1}, []uint32{1}},
		{[]int64{2, 3, 4}, []int64{2, 3, 4}, []int64{4}, []uint32{6, 4}, []uint32{4, 1}, []uint32{0, 1}},
		{[]int64{2, 1, 3, 4}, []int64{2, 1, 1, 4}, []int64{3, 1}, []uint32{2, 3, 4}, []uint32{4, 0, 1}, []uint32{0, 1, 0}},
		{[]int64{5, 1, 7}, []int64{1}, []int64{5, 1, 7}, []uint32{35}, []uint32{0}, []uint32{1}},
	} {
		v, ok := broadcastPush(c.out, 3, c.a, c.b)
		rank := len(c.dims)
		if !ok || v[0] != uint32(graph.NumElements(c.out)) || v[1] != uint32(rank) {
			t.Fatalf("broadcastPush(%v, %v, %v) = %v, %v", c.out, c.a, c.b, v, ok)
		}
		got := fmt.Sprint(v[2:2+rank], v[5:5+rank], v[8:8+rank])
		if want := fmt.Sprint(c.dims, c.sa, c.sb); got != want {
			t.Errorf("broadcastPush(%v, %v, %v): dims and strides %s, want %s", c.out, c.a, c.b, got, want)
		}
	}
	if _, ok := broadcastPush([]int64{2, 3, 4, 5}, 3, []int64{2, 1, 4, 1}, []int64{3, 1, 5}); ok {
		t.Errorf("rank 4 after merging accepted with maxR 3")
	}
}
