package hostfallback

import (
	"runtime"
	"testing"
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
