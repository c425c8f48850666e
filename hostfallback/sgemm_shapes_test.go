package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

func BenchmarkSgemmShapes(b *testing.B) {
	packed := *gemmBest
	packed.direct = nil
	for _, kn := range []*sgemmKernel{gemmBest, &packed} {
		for _, s := range [][3]int{{64, 12544, 147}, {64, 3136, 576}, {128, 784, 1152}, {256, 196, 2304}, {512, 49, 4608}, {64, 3136, 64}, {16, 16, 8}, {16, 8, 16}, {32, 64, 64}} {
			b.Run(fmt.Sprint(kn.direct != nil, s), func(b *testing.B) {
				m, n, k := s[0], s[1], s[2]
				r := rand.New(rand.NewPCG(1, 2))
				x, y, z := nnRandFloats(r, m*k), nnRandFloats(r, k*n), make([]float32, m*n)
				b.ResetTimer()
				for range b.N {
					gemmRun(nil, kn, false, false, m, n, k, 1, x, k, y, n, 1, nil, z, n, runtime.GOMAXPROCS(0))
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
