package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func TestBatchNormalization(t *testing.T) {
	x := nnF32([]int64{1, 2, 1, 2}, 1, 2, 3, 4)
	scale, bias := nnF32([]int64{2}, 1, 2), nnF32([]int64{2}, 0, 1)
	mean, variance := nnF32([]int64{2}, 1.5, 3.5), nnF32([]int64{2}, 0.25, 0.25)
	for _, opset := range []int64{6, 9, 15} {
		y, err := nnRun("BatchNormalization", opset, nnAttrs{"epsilon": 0.0}, x, scale, bias, mean, variance)
		if err != nil {
			t.Fatal(err)
		}
		nnCheck(t, fmt.Sprint("inference opset ", opset), y, x.Shape, []float32{-1, 1, -1, 3}, 1e-6, 0)
	}

	// Non-spatial (per activation) statistics of opset 7.
	xa := nnF32([]int64{2, 1, 2}, 3, 6, 1, 2)
	y, err := nnRun("BatchNormalization", 7, nnAttrs{"epsilon": 0.0, "spatial": 0}, xa,
		nnF32([]int64{1, 2}, 1, 1), nnF32([]int64{1, 2}, 0, 0), nnF32([]int64{1, 2}, 1, 2), nnF32([]int64{1, 2}, 1, 4))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "spatial=0", y, xa.Shape, []float32{2, 2, 0, 0}, 1e-6, 0)

	// Training: batch statistics, running statistics updated.
	xt := nnF32([]int64{2, 1, 2}, 1, 2, 3, 4)
	one, zero := nnF32([]int64{1}, 1), nnF32([]int64{1}, 0)
	out, err := nnRunOuts("BatchNormalization", 15, nnAttrs{"epsilon": 0.0, "training_mode": 1}, []string{"y", "rm", "rv"}, xt, one, zero, zero, one)
	if err != nil {
		t.Fatal(err)
	}
	s := float32(1 / math.Sqrt(1.25))
	nnCheck(t, "training Y", out[0], xt.Shape, []float32{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}, 1e-6, 1e-6)
	nnCheck(t, "running mean", out[1], []int64{1}, []float32{0.25}, 1e-6, 0)
	nnCheck(t, "running var", out[2], []int64{1}, []float32{1.025}, 1e-6, 0)
	out, err = nnRunOuts("BatchNormalization", 6, nnAttrs{"epsilon": 0.0}, []string{"y", "m", "v", "sm", "sv"}, xt, one, zero, zero, one)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "opset 6 training saved mean", out[3], []int64{1}, []float32{2.5}, 1e-6, 0)
	nnCheck(t, "opset 6 training saved var", out[4], []int64{1}, []float32{1.25}, 1e-6, 0)

	if _, err := nnRunOuts("BatchNormalization", 15, nil, []string{"y", "rm", "rv"}, xt, one, zero, zero, one); err == nil {
		t.Error("running statistics without training_mode: no error")
	}
	if _, err := nnRunOuts("BatchNormalization", 6, nnAttrs{"is_test": 1}, []string{"y", "m"}, xt, one, zero, zero, one); err == nil {
		t.Error("statistics with is_test: no error")
	}
	if _, err := nnRun("BatchNormalization", 15, nil, x, one, bias, mean, variance); err == nil {
		t.Error("short scale: no error")
	}
}

func TestInstanceAndGroupNormalization(t *testing.T) {
	x := nnF32([]int64{1, 2, 4}, 1, 2, 3, 4, 2, 2, 2, 2)
	y, err := nnRun("InstanceNormalization", 6, nil, x, nnF32([]int64{2}, 2, 1), nnF32([]int64{2}, 0, 5))
	if err != nil {
		t.Fatal(err)
	}
	s := float32(1 / math.Sqrt(1.25+1e-5))
	nnCheck(t, "instance", y, x.Shape, []float32{-3 * s, -s, s, 3 * s, 5, 5, 5, 5}, 1e-6, 1e-6)

	xg := nnF32([]int64{1, 4, 1}, 1, 2, 3, 4)
	y, err = nnRun("GroupNormalization", 18, nnAttrs{"epsilon": 0.0, "num_groups": 2}, xg, nnF32([]int64{2}, 2, 3), nnF32([]int64{2}, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "group, per-group scale", y, xg.Shape, []float32{-2, 2, -2, 4}, 1e-6, 0)
	y, err = nnRun("GroupNormalization", 21, nnAttrs{"epsilon": 0.0, "num_groups": 2}, xg, nnF32([]int64{4}, 1, 2, 3, 4), nnF32([]int64{4}, 0, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "group, per-channel scale", y, xg.Shape, []float32{-1, 2, -3, 5}, 1e-6, 0)
	if _, err := nnRun("GroupNormalization", 21, nnAttrs{"num_groups": 3}, xg, nnF32([]int64{4}, 1, 2, 3, 4), nnF32([]int64{4}, 0, 0, 0, 1)); err == nil {
		t.Error("num_groups not dividing channels: no error")
	}
	// No channels: any num_groups divides them, and the output is empty
	// (2^40 groups made 2^41 statistics and the process died of out of
	// memory; found by FuzzPipeline).
	empty := nnF32([]int64{3, 0, 4})
	if y, err := nnRun("GroupNormalization", 18, nnAttrs{"num_groups": int64(1 << 40)}, empty, empty, empty); err != nil || y.NumElements() != 0 {
		t.Errorf("GroupNormalization of X[3 0 4] in 2^40 groups: %v, %v", y, err)
	}

	// Random shapes against the definition.
	r := rand.New(rand.NewPCG(15, 16))
	xr := nnRand(r, 2, 6, 5, 3)
	sc, bi := nnRand(r, 6), nnRand(r, 6)
	y, err = nnRun("GroupNormalization", 21, nnAttrs{"num_groups": 3}, xr, sc, bi)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 180)
	xv := graph.View[float32](xr)
	for g := range 6 {
		seg := xv[g*30 : (g+1)*30]
		var m, q float64
		for _, v := range seg {
			m += float64(v) / 30
		}
		for _, v := range seg {
			q += (float64(v) - m) * (float64(v) - m) / 30
		}
		for i, v := range seg {
			ch := (g%3)*2 + i/15
			want[g*30+i] = float32((float64(v)-m)/math.Sqrt(q+1e-5))*graph.View[float32](sc)[ch] + graph.View[float32](bi)[ch]
		}
	}
	tol := opTol("GroupNormalization")
	nnCheck(t, "group random", y, xr.Shape, want, tol.Abs, tol.Rel)
}

func TestLayerNormalization(t *testing.T) {
	x := nnF32([]int64{2, 2}, 1, 3, 2, 4)
	out, err := nnRunOuts("LayerNormalization", 17, nnAttrs{"epsilon": 0.0}, []string{"y", "mean", "inv"}, x, nnF32([]int64{2}, 1, 2), nnF32([]int64{1}, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "Y", out[0], x.Shape, []float32{-0.5, 2.5, -0.5, 2.5}, 1e-6, 0)
	nnCheck(t, "Mean", out[1], []int64{2, 1}, []float32{2, 3}, 0, 0)
	if out[2].DType != graph.Float {
		t.Fatalf("InvStdDev is %s", out[2].DType)
	}
	nnCheck(t, "InvStdDev", out[2], []int64{2, 1}, []float32{1, 1}, 0, 0)

	r := rand.New(rand.NewPCG(17, 18))
	xr := nnRand(r, 3, 5, 7)
	for _, axis := range []int{0, 1, -1} {
		a := axis
		if a < 0 {
			a += 3
		}
		norm := xr.Shape[a:]
		sc, bi := nnRand(r, norm...), nnRand(r, norm[len(norm)-1])
		y, err := nnRun("LayerNormalization", 17, nnAttrs{"axis": axis}, xr, sc, bi)
		if err != nil {
			t.Fatal(err)
		}
		size := int(graph.NumElements(norm))
		want := make([]float32, 105)
		xv := graph.View[float32](xr)
		for row := range 105 / size {
			seg := xv[row*size : (row+1)*size]
			var m, q float64
			for _, v := range seg {
				m += float64(v) / float64(size)
			}
			for _, v := range seg {
				q += (float64(v) - m) * (float64(v) - m) / float64(size)
			}
			for i, v := range seg {
				want[row*size+i] = float32((float64(v)-m)/math.Sqrt(q+1e-5))*graph.View[float32](sc)[i] + graph.View[float32](bi)[i%7]
			}
		}
		tol := opTol("LayerNormalization")
		nnCheck(t, fmt.Sprint("axis ", axis), y, xr.Shape, want, tol.Abs, tol.Rel)
	}
	if _, err := nnRun("LayerNormalization", 17, nnAttrs{"axis": 2}, xr, nnRand(r, 3)); err == nil {
		t.Error("Scale not broadcasting: no error")
	}
	if _, err := nnRun("LayerNormalization", 17, nnAttrs{"axis": 3}, xr, nnRand(r, 1)); err == nil {
		t.Error("axis out of range: no error")
	}
}

func TestLpMvnLrn(t *testing.T) {
	x := nnF32([]int64{2, 2}, 3, 4, 0, -2)
	y, err := nnRun("LpNormalization", 1, nil, x)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "L2", y, x.Shape, []float32{0.6, 0.8, 0, -1}, 1e-6, 0)
	y, err = nnRun("LpNormalization", 1, nnAttrs{"p": 1, "axis": 0}, x)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "L1 axis 0", y, x.Shape, []float32{1, 4.0 / 6, 0, -2.0 / 6}, 1e-6, 0)
	if _, err := nnRun("LpNormalization", 1, nnAttrs{"p": 3}, x); err == nil {
		t.Error("p=3: no error")
	}

	xm := nnF32([]int64{1, 2, 1, 2}, 1, 3, 10, 20)
	y, err = nnRun("MeanVarianceNormalization", 13, nil, xm)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "MVN", y, xm.Shape, []float32{-1, 1, -1, 1}, 1e-6, 0)
	y, err = nnRun("MeanVarianceNormalization", 13, nnAttrs{"axes": []int64{1}}, xm)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "MVN axes", y, xm.Shape, []float32{-1, -1, 1, 1}, 1e-6, 0)

	xl := nnF32([]int64{1, 3, 1, 1}, 1, 2, 3)
	y, err = nnRun("LRN", 13, nnAttrs{"size": 3, "alpha": 3.0, "beta": 1.0}, xl)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "LRN size 3", y, xl.Shape, []float32{1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-6, 1e-6)
	y, err = nnRun("LRN", 13, nnAttrs{"size": 2, "alpha": 2.0, "beta": 1.0}, xl)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "LRN size 2", y, xl.Shape, []float32{1.0 / 6, 2.0 / 14, 3.0 / 10}, 1e-6, 1e-6)
	if _, err := nnRun("LRN", 13, nil, xl); err == nil {
		t.Error("LRN without size: no error")
	}
}

// TestSkipLayerNormalization checks the fused residual normalization
// against the Add and LayerNormalization kernels (the same float32
// operations, so the same bits) over rows whose lengths exercise the
// vector loops and their tails, with and without B, on one thread and on
// four; and that a Skip of another shape is refused naming the node.
func TestSkipLayerNormalization(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	eps := ewWith(ewFloat("epsilon", 1e-3))
	node := &graph.Node{Name: "sln", OpType: "SkipLayerNormalization", Domain: ops.FusedDomain, Outputs: []string{"y"}, Attrs: eps}
	for _, cols := range []int64{5, 8, 19, 768} {
		x, s, scale, bias := nnRand(r, 3, 2, cols), nnRand(r, 3, 2, cols), nnRand(r, cols), nnRand(r, cols)
		sum := ewRun(t, "Add", 14, nil, x, s)
		for _, in := range [][]graph.Value{{x, s, scale}, {x, s, scale, bias}} {
			want := graph.View[float32](ewRun(t, "LayerNormalization", 17, eps, append([]graph.Value{sum}, in[2:]...)...))
			for _, threads := range []int{1, 4} {
				c := &Call{Node: node, Opset: 1, In: in, Out: make([]graph.Value, 1), Alloc: nanAlloc, Threads: NewThreads(threads)}
				if err := Lookup(ops.FusedDomain, "SkipLayerNormalization")(c); err != nil {
					t.Fatal(err)
				}
				if got := graph.View[float32](c.Out[0].(*graph.Tensor)); !slices.Equal(got, want) {
					t.Fatalf("%d columns, %d inputs, %d threads: %v, want %v", cols, len(in), threads, got, want)
				}
			}
		}
	}
	c := &Call{Node: node, Opset: 1, In: []graph.Value{nnRand(r, 2, 4), nnRand(r, 4), nnRand(r, 4)}, Out: make([]graph.Value, 1)}
	if err := Lookup(ops.FusedDomain, "SkipLayerNormalization")(c); err == nil || !strings.Contains(err.Error(), "sln") {
		t.Fatalf("Skip of another shape: error %v, want one naming the node", err)
	}
}
