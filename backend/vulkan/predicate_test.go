package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

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
				checkMove(t, d, kerneltest.Node(op, []string{"a", "b"}), 13,
					kerneltest.Arg{T: kerneltest.EdgeValues(r, dt, s[0])}, kerneltest.Arg{T: kerneltest.EdgeValues(r, dt, s[1]), Const: len(s[1]) == 0})
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
			checkMove(t, d, kerneltest.Node(op, []string{"a", "b"}), 7, kerneltest.Arg{T: kerneltest.EdgeValues(r, graph.Bool, s[0])}, kerneltest.Arg{T: kerneltest.EdgeValues(r, graph.Bool, s[1])})
		}
		checkMove(t, d, kerneltest.Node("Not", []string{"a"}), 1, kerneltest.Arg{T: kerneltest.EdgeValues(r, graph.Bool, s[0])})
	}
}

// TestIsNaNIsInfMatchesCPU checks IsNaN and IsInf with each pair of its
// detect attributes.
func TestIsNaNIsInfMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range [][]int64{{}, {1}, {13}, {127}, {2, 3, 5, 7}, {1, 2, 1, 3, 1, 5}} {
		x := kerneltest.EdgeValues(r, graph.Float, s)
		checkMove(t, d, kerneltest.Node("IsNaN", []string{"x"}), 13, kerneltest.Arg{T: x})
		for _, pos := range []int64{0, 1} {
			for _, neg := range []int64{0, 1} {
				checkMove(t, d, kerneltest.Node("IsInf", []string{"x"}, kerneltest.IntAttr("detect_positive", pos), kerneltest.IntAttr("detect_negative", neg)), 20, kerneltest.Arg{T: x})
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
