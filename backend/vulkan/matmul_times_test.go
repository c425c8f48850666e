package vulkan_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// timedProducts are the products TestMatMulTimes times: a GPT-2-style
// decoder step (qkv, fc, out, vocabulary head, 4 rows), a 4096-wide
// layer at one row (as MatMul and as Gemm with transB, PyTorch's Linear),
// attention at one query (scores and context over 8 heads), and square
// products. b is a constant weight.
var timedProducts = []struct {
	name   string
	a, b   []int64
	transB bool
}{
	{"qkv", []int64{1, 512}, []int64{512, 1536}, false},
	{"fc", []int64{1, 512}, []int64{512, 2048}, false},
	{"out", []int64{1, 2048}, []int64{2048, 512}, false},
	{"vocab", []int64{1, 512}, []int64{512, 1024}, false},
	{"fc-4rows", []int64{4, 512}, []int64{512, 2048}, false},
	{"4096-row", []int64{1, 4096}, []int64{4096, 4096}, false},
	{"4096-row-transB", []int64{1, 4096}, []int64{4096, 4096}, true},
	{"scores", []int64{1, 8, 1, 64}, []int64{1, 8, 64, 512}, false},
	{"context", []int64{1, 8, 1, 512}, []int64{1, 8, 512, 64}, false},
	{"512^3", []int64{512, 512}, []int64{512, 512}, false},
	{"1024^3", []int64{1024, 1024}, []int64{1024, 1024}, false},
	{"2048^3", []int64{2048, 2048}, []int64{2048, 2048}, false},
	{"4096^3", []int64{4096, 4096}, []int64{4096, 4096}, false},
	{"4096^3-transB", []int64{4096, 4096}, []int64{4096, 4096}, true},
}

// TestMatMulTimes logs the device time of each of timedProducts under
// each schedule of matmul.comp, fp32 and with fp16 weights: the best of
// 20 traced Runs of one model per schedule and weight type, in which each
// product reads the output of a Relu, so that its time is its dispatch's
// alone (a segment's first dispatch also pays for copying the inputs in).
// It runs with ONNXVK_MATMUL_TIMES=1 (on a GPU; nothing is checked).
func TestMatMulTimes(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_MATMUL_TIMES", "times matrix products")
	type run struct {
		sched string
		half  bool
		cols  int64
	}
	var runs []run
	for _, half := range []bool{false, true} {
		for _, sched := range vulkan.MatMulSchedules() {
			runs = append(runs, run{sched, half, 0})
		}
	}
	if os.Getenv("ONNXVK_MATMUL_TIMES_COLUMNS") == "1" {
		// The gemv schedule with each column count forced.
		for _, cols := range []int64{2, 4, 8, 16, 32, 64} {
			runs = append(runs, run{"gemv", false, cols})
		}
	}
	for _, rn := range runs {
		sched, half := rn.sched, rn.half
		{
			t.Run(fmt.Sprintf("%s/fp16=%v/cols=%d", sched, half, rn.cols), func(t *testing.T) {
				forced := vulkan.Schedule{MatMul: sched, GEMVColumns: rn.cols}
				if rn.cols > 0 {
					sched = fmt.Sprint("gemv/", rn.cols)
				}
				var picked []int
				for i, p := range timedProducts {
					m := graph.NumElements(p.a) / p.a[len(p.a)-1]
					if !(rn.sched == "blocked" && m > 1024 || rn.sched == "gemv" && m > 64) {
						picked = append(picked, i)
					}
				}
				best := timeProducts(t, picked, half, forced)
				for j, i := range picked {
					p := timedProducts[i]
					m := graph.NumElements(p.a) / p.a[len(p.a)-1]
					flops := 2 * float64(m) * float64(graph.NumElements(p.b))
					bytes := float64(graph.NumElements(p.b)) * 4
					if half {
						bytes /= 2
					}
					t.Logf("%-16s fp16=%-5v %-8s %9.1f µs %8.1f GFLOP/s %7.1f GB/s of b", p.name, half, sched,
						float64(best[j])/1e3, flops/float64(best[j]), bytes/float64(best[j]))
				}
			})
		}
	}
}

// timeProducts returns the best device time of 20 Runs of each product
// timedProducts[i] (a·b, a·bᵀ with transB) for i in picked, on a device
// that forces the schedules forced.
func timeProducts(t *testing.T, picked []int, half bool, forced vulkan.Schedule) []time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	g := graph.NewGraph("times")
	in := map[string]*onnxvk.Tensor{}
	for _, i := range picked {
		p := timedProducts[i]
		x, w, a, y := fmt.Sprint("x", i), fmt.Sprint("w", i), fmt.Sprint("a", i), fmt.Sprint("y", i)
		wt := graph.NewTensor(graph.Float, p.b)
		for k := range graph.View[float32](wt) {
			graph.View[float32](wt)[k] = 2*r.Float32() - 1
		}
		g.Initializers[w] = wt
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: x, Type: graph.TensorType(graph.Float, graph.ShapeOf(p.a...))})
		n := &graph.Node{Name: p.name, OpType: "MatMul", Inputs: []string{a, w}, Outputs: []string{y}}
		if p.transB {
			n.OpType, n.Attrs = "Gemm", map[string]*graph.Attribute{"transB": {Name: "transB", Type: graph.AttrInt, I: 1}}
		}
		g.Nodes = append(g.Nodes, &graph.Node{Name: "relu" + x, OpType: "Relu", Inputs: []string{x}, Outputs: []string{a}}, n)
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: y})
		vs := make([]float32, graph.NumElements(p.a))
		for k := range vs {
			vs[k] = 2*r.Float32() - 1
		}
		in[x], _ = onnxvk.NewTensor(p.a, vs)
	}
	opts := []onnxvk.Option{onnxvk.WithDevice("vulkan"), onnxvk.WithVulkanOptions(vulkan.WithSchedule(forced))}
	if half {
		opts = append(opts, onnxvk.WithFP16Weights())
	}
	s, err := onnxvk.NewSession(&graph.Model{Name: "times", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}, opts...)
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	times := map[string][]time.Duration{}
	for range 20 {
		tr := backend.NewTrace()
		if _, err := s.Run(backend.WithTrace(context.Background(), tr), in); err != nil {
			t.Fatal(err)
		}
		for _, ev := range tr.Events() {
			if ev.DeviceDur > 0 {
				times[ev.Name] = append(times[ev.Name], ev.DeviceDur)
			}
		}
	}
	best := make([]time.Duration, len(picked))
	for j, i := range picked {
		ts := times[timedProducts[i].name]
		if len(ts) == 0 {
			t.Fatalf("%s: no device times", timedProducts[i].name)
		}
		best[j] = slices.Min(ts)
	}
	return best
}
