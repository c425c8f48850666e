package partition

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// bestBottleneck returns, by trying every split, the least cost of the
// costliest run over the splits of costs into stages contiguous non-empty
// runs.
func bestBottleneck(costs []int64, stages int) int64 {
	if stages == 1 {
		var sum int64
		for _, c := range costs {
			sum += c
		}
		return sum
	}
	best := int64(-1)
	var first int64
	for i := 0; i <= len(costs)-stages; i++ {
		first += costs[i]
		if b := max(first, bestBottleneck(costs[i+1:], stages-1)); best < 0 || b < best {
			best = b
		}
	}
	return best
}

// TestContiguousOptimal compares Contiguous with every split of random
// cost sequences: the runs are contiguous, non-empty, cover every node and
// their costliest is the least possible.
func TestContiguousOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 3000 {
		n := 1 + rng.IntN(12)
		stages := 1 + rng.IntN(n)
		costs := make([]int64, n)
		for i := range costs {
			costs[i] = 1 + rng.Int64N([]int64{3, 20, 1000}[trial%3])
		}
		ends := Contiguous(costs, stages)
		if len(ends) != stages || ends[stages-1] != n {
			t.Fatalf("costs %v, %d stages: ends %v", costs, stages, ends)
		}
		var worst int64
		start := 0
		for _, end := range ends {
			if end <= start {
				t.Fatalf("costs %v, %d stages: ends %v: empty stage", costs, stages, ends)
			}
			var sum int64
			for _, c := range costs[start:end] {
				sum += c
			}
			worst, start = max(worst, sum), end
		}
		if want := bestBottleneck(costs, stages); worst != want {
			t.Fatalf("costs %v, %d stages: ends %v: costliest stage %d, best split %d", costs, stages, ends, worst, want)
		}
	}
}

// TestContiguousEven checks that the stages share the cost evenly where
// the least bottleneck leaves room: a greedy split that fills each stage
// up to the bottleneck would leave the last stages with little or nothing.
func TestContiguousEven(t *testing.T) {
	for _, c := range []struct {
		costs  []int64
		stages int
		ends   []int
	}{
		{[]int64{1, 1, 1, 1, 1, 1, 1, 1}, 4, []int{2, 4, 6, 8}},
		{[]int64{10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 3, []int{1, 11, 21}},
		{[]int64{20, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 4, []int{1, 7, 14, 21}},
	} {
		if got := Contiguous(c.costs, c.stages); !slices.Equal(got, c.ends) {
			t.Errorf("costs %v, %d stages: ends %v, want %v", c.costs, c.stages, got, c.ends)
		}
	}
}
