package hostfallback

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	(*Threads)(nil).For(8, 1, func(lo, hi int) {
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
		(*Threads)(nil).For(len(counts), 1, func(lo, hi int) {
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

// TestThreadsBudget runs parallel loops, nested and from several
// goroutines at once, under budgets of 1 to 4 goroutines with 8 of
// GOMAXPROCS: the pool never lends a budget more than n-1 workers at once
// (its own count), a budget of 1 never runs a chunk off the calling
// goroutine, and every item runs once.
func TestThreadsBudget(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for n := 1; n <= 4; n++ {
		th := NewThreads(n)
		var items atomic.Int64
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					th.For(64, 1, func(lo, hi int) {
						for range hi - lo {
							th.For(16, 1, func(lo2, hi2 int) { items.Add(int64(hi2 - lo2)) })
						}
						items.Add(int64(hi - lo))
					})
				}
			}()
		}
		wg.Wait()
		if want := int64(3 * 50 * 64 * 17); items.Load() != want {
			t.Fatalf("budget %d: %d items ran, want %d", n, items.Load(), want)
		}
		if p := th.PeakLent(); p > n-1 {
			t.Fatalf("budget %d: %d pool workers lent at once", n, p)
		}
		// A worker gives itself back just after its last chunk.
		for end := time.Now().Add(time.Second); th.lent.Load() != 0 && time.Now().Before(end); {
			runtime.Gosched()
		}
		if th.lent.Load() != 0 {
			t.Fatalf("budget %d: %d workers still counted as lent", n, th.lent.Load())
		}
	}

	one := NewThreads(1)
	caller := goroutineID()
	one.For(1000, 1, func(lo, hi int) {
		if id := goroutineID(); id != caller {
			t.Errorf("budget 1 ran items %d..%d on goroutine %d, not the caller's %d", lo, hi, id, caller)
		}
	})
}

// TestThreadsLend checks that a budget of several goroutines does get pool
// workers (so that TestThreadsBudget's bound is not met by never lending):
// loops run until a worker has been lent, for up to ten seconds.
func TestThreadsLend(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	th := NewThreads(3)
	deadline := time.Now().Add(10 * time.Second)
	for th.PeakLent() == 0 && time.Now().Before(deadline) {
		th.For(64, 1, func(_, _ int) { time.Sleep(10 * time.Microsecond) })
	}
	if th.PeakLent() == 0 {
		t.Fatal("a budget of 3 was never lent a worker in 10 s")
	}
	if w := NewThreads(16).Workers(); w != 4 {
		t.Fatalf("a budget of 16 with GOMAXPROCS 4 has %d workers, want 4", w)
	}
	if w := NewThreads(0).Workers(); w != 4 {
		t.Fatalf("a budget of 0 with GOMAXPROCS 4 has %d workers, want 4", w)
	}
}

// goroutineID returns the calling goroutine's id, from its stack header.
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _ := strconv.Atoi(strings.Fields(strings.TrimPrefix(string(buf), "goroutine "))[0])
	return id
}
