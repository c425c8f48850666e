package hostfallback

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ParallelFor splits [0, n) into contiguous chunks of at least grain items
// and runs f on each chunk, on the calling goroutine and on up to
// GOMAXPROCS-1 idle workers of a persistent pool, so that a parallel loop
// costs no goroutine start. Small loops run on the calling goroutine. The
// caller claims chunks too and only waits for chunks a worker has already
// started, so nested calls (from inside f) cannot deadlock: with every
// worker busy, the caller runs all chunks itself. A panic in a chunk is
// raised again on the calling goroutine once the other chunks are done,
// so that the caller's recover sees it instead of the process dying.
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
	j := &parallelJob{f: f, n: n, chunk: chunk, chunks: (n + chunk - 1) / chunk}
	j.wg.Add(j.chunks)
	startParallelPool()
	for range j.chunks - 1 {
		select {
		case parallelJobs <- j:
		default:
		}
	}
	j.run()
	j.wg.Wait()
	if j.failure != nil {
		panic(j.failure)
	}
}

// parallelJob is one ParallelFor call: chunks are claimed through next.
type parallelJob struct {
	f                func(lo, hi int)
	n, chunk, chunks int
	next             atomic.Int64
	wg               sync.WaitGroup
	once             sync.Once
	failure          any
}

// run claims and runs chunks until none is left.
func (j *parallelJob) run() {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= j.chunks {
			return
		}
		j.chunkAt(c)
	}
}

// chunkAt runs chunk c, recording its panic.
func (j *parallelJob) chunkAt(c int) {
	defer j.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			j.once.Do(func() { j.failure = p })
		}
	}()
	lo := c * j.chunk
	j.f(lo, min(lo+j.chunk, j.n))
}

var (
	// parallelJobs hands jobs to idle workers; it is unbuffered, so a send
	// succeeds only when a worker is waiting.
	parallelJobs = make(chan *parallelJob)
	parallelOnce sync.Once
)

// startParallelPool starts the workers once: GOMAXPROCS-1 of them (the
// caller is the last), at least one.
func startParallelPool() {
	parallelOnce.Do(func() {
		for range max(runtime.GOMAXPROCS(0)-1, 1) {
			go func() {
				for j := range parallelJobs {
					j.run()
				}
			}()
		}
	})
}
