package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// BenchmarkScaledDotProductAttention times the blocked attention and the
// one-entry-at-a-time path of few queries on the layout of PyTorch's
// nn.MultiheadAttention at BERT-base size (12 heads of depth 64 over 128
// tokens, batch 1), on one thread and on two.
func BenchmarkScaledDotProductAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	tc := sdpaCase{"bert", []int64{128, 12, 64}, []int64{128, 12, 64}, []int64{128, 12, 64}, [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}, 0.125}
	q, k, v, n := tc.operands(r)
	p, err := newSDPAPlan(&Call{Node: n, Opset: 1}, q.Shape, k.Shape, v.Shape, nil, [3]int{int(q.NumElements()), int(k.NumElements()), int(v.NumElements())})
	if err != nil {
		b.Fatal(err)
	}
	y := graph.NewTensor(graph.Float, p.out)
	qv, kv, vv, yv := graph.View[float32](q), graph.View[float32](k), graph.View[float32](v), graph.View[float32](y)
	flops := float64(2 * p.entries * p.q.rows * p.k.cols * (p.q.cols + p.v.cols))
	for _, threads := range []int{1, 2} {
		th := NewThreads(threads)
		for _, path := range []string{"blocked", "small"} {
			b.Run(fmt.Sprint(path, "-", threads, "threads"), func(b *testing.B) {
				for b.Loop() {
					if path == "blocked" {
						newSDPAJob(p, gemmBest, th.Workers(), qv, kv, vv, yv, tc.scale, &sdpaMask{}).start(th)
						continue
					}
					sdpaSmall(th, p, qv, kv, vv, yv, tc.scale, &sdpaMask{})
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
