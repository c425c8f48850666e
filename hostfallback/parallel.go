package hostfallback

import (
	"runtime"
	"sync"
)

// ParallelFor splits [0, n) into contiguous chunks of at least grain items
// and runs f on each chunk, on up to GOMAXPROCS goroutines. Small loops run
// on the calling goroutine. A panic in a chunk run on another goroutine is
// raised again on the calling goroutine once the other chunks are done, so
// that the caller's recover sees it instead of the process dying.
func ParallelFor(n, grain int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	workers := min(runtime.GOMAXPROCS(0), (n+grain-1)/grain)
	if workers <= 1 {
		f(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var (
		wg      sync.WaitGroup
		once    sync.Once
		failure any
	)
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					once.Do(func() { failure = p })
				}
			}()
			f(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	f(0, min(chunk, n))
	wg.Wait()
	if failure != nil {
		panic(failure)
	}
}
