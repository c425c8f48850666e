package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// memoCall is a Call as a compiled program makes it: with a plan cache
// and the inputs marked constant or not.
func memoCall(op string, opset int64, memo *stepMemo, consts []bool, in ...graph.Value) *Call {
	n := &graph.Node{Name: op + "_0", OpType: op, Domain: graph.DefaultDomain, Outputs: []string{"y"}}
	for i := range in {
		n.Inputs = append(n.Inputs, fmt.Sprint("x", i))
	}
	return &Call{Node: n, Opset: opset, In: in, Out: make([]graph.Value, 1), memo: memo, consts: consts}
}

func TestMemoBuildsOncePerKey(t *testing.T) {
	memo := new(stepMemo)
	c := memoCall("Relu", 14, memo, []bool{false}, graph.NewTensor(graph.Float, []int64{2, 3}))
	builds := 0
	build := func() (int, error) { builds++; return builds, nil }
	for range 3 {
		if p, err := Memo(c, c.ShapeKey(), build); err != nil || p != 1 {
			t.Fatalf("Memo = %d, %v; want the first plan, 1", p, err)
		}
	}
	c.In[0] = graph.NewTensor(graph.Float, []int64{3, 2})
	if p, _ := Memo(c, c.ShapeKey(), build); p != 2 || builds != 2 {
		t.Fatalf("a new shape gave plan %d after %d builds; want a second build", p, builds)
	}
	if p, _ := Memo(c, c.ShapeKey(7), build); p != 3 {
		t.Fatalf("a new extra key value gave plan %d; want a third build", p)
	}
	c.memo = nil
	Memo(c, c.ShapeKey(7), build)
	Memo(c, c.ShapeKey(7), build)
	if builds != 5 {
		t.Fatalf("without a cache, %d builds; want one per call (5)", builds)
	}
}

// TestSliceRuntimeStartsNotCached runs one compiled Slice step with the
// same shapes and different run-time starts: the cached plan must not be
// reused for other values.
func TestSliceRuntimeStartsNotCached(t *testing.T) {
	memo := new(stepMemo)
	x := ewF32(ewShape(6), 0, 1, 2, 3, 4, 5)
	for _, start := range []int64{1, 3, 1, 4} {
		starts := ewT(graph.Int64, ewShape(1), start)
		ends := ewT(graph.Int64, ewShape(1), start+2)
		c := memoCall("Slice", 13, memo, []bool{false, false, false}, x, starts, ends)
		if err := sliceKernel(c); err != nil {
			t.Fatal(err)
		}
		got := graph.View[float32](c.Out[0].(*graph.Tensor))
		if len(got) != 2 || got[0] != float32(start) || got[1] != float32(start+1) {
			t.Fatalf("Slice [%d:%d] = %v", start, start+2, got)
		}
	}
}

// TestMatMulConstantBPacked runs a compiled MatMul whose B is constant,
// so that it is packed once, on several A and from several goroutines.
func TestMatMulConstantBPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range [][2][]int64{{{32, 64}, {64, 192}}, {{2, 16, 64}, {64, 128}}, {{3, 300}, {300, 5}}, {{70, 513}, {513, 33}},
		// Rows for gemvPacked: one to four, columns and depths off the
		// vector width and the k-slab.
		{{1, 512}, {512, 1536}}, {{1, 1, 257}, {257, 33}}, {{3, 17}, {17, 100}}, {{2, 2, 513}, {513, 47}}, {{1, 5}, {5, 3}}} {
		b := nnRand(r, tc[1]...)
		memo := new(stepMemo)
		var wg sync.WaitGroup
		for g := range 4 {
			a := nnRand(rand.New(rand.NewPCG(uint64(g), 9)), tc[0]...)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					c := memoCall("MatMul", 13, memo, []bool{false, true}, a, b)
					if err := matmulKernel(c); err != nil {
						t.Error(err)
						return
					}
					shape, want := naiveMatMul(a, b)
					tol := opTol("MatMul")
					nnCheck(t, fmt.Sprint(tc[0], "·", tc[1]), c.Out[0].(*graph.Tensor), shape, want, tol.Abs, tol.Rel)
				}
			}()
		}
		wg.Wait()
		if p, ok := memo.Load().plan.(*matmulShape); !ok || p.packedB == nil && matmulPrepacks(int(graph.NumElements(tc[0][:len(tc[0])-1])), int(tc[1][1]), int(tc[1][0])) {
			t.Errorf("%v·%v: B was not packed in the cached plan", tc[0], tc[1])
		}
	}
}
