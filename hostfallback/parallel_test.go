package hostfallback

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestParallelForRaisesWorkerPanics(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	defer func() {
		if p := recover(); p != "late chunk" {
			t.Fatalf("recovered %v, want the worker's panic", p)
		}
	}()
	ParallelFor(8, 1, func(lo, hi int) {
		if lo > 0 {
			panic("late chunk")
		}
	})
	t.Fatal("ParallelFor returned normally")
}

// TestParallelForBackToBack runs many short jobs in a row, which spinning
// workers pick up without the channel, and checks that every item runs
// exactly once and that the last job is let go.
func TestParallelForBackToBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	counts := make([]atomic.Int32, 64)
	for range 500 {
		ParallelFor(len(counts), 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				counts[i].Add(1)
			}
		})
	}
	for i := range counts {
		if n := counts[i].Load(); n != 500 {
			t.Fatalf("item %d ran %d times, want 500", i, n)
		}
	}
	if parallelLatest.Load() != nil {
		t.Fatal("the last job is still held after ParallelFor returned")
	}
}

// TestParallelSpin checks that parallelSpin stops as soon as ready says
// so, and gives up after parallelSpinTime.
func TestParallelSpin(t *testing.T) {
	calls := 0
	if !parallelSpin(func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Fatalf("ready after 3 calls: spun %d times", calls)
	}
	start := time.Now()
	if parallelSpin(func() bool { return false }) {
		t.Fatal("never ready, but parallelSpin reported ready")
	}
	if d := time.Since(start); d < parallelSpinTime {
		t.Fatalf("gave up after %v, before %v", d, parallelSpinTime)
	}
}
