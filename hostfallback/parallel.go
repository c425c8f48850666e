package hostfallback

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
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
//
// A worker that has finished a job watches for the next one, and a caller
// waits for the workers' chunks, spinning for up to parallelSpinTime
// before they sleep: waking a sleeping thread can take tens of
// microseconds (on virtual machines), longer than many chunks take.
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
	j := &parallelJob{f: f, n: n, chunk: chunk, chunks: (n + chunk - 1) / chunk, done: make(chan struct{})}
	j.left.Store(int64(j.chunks))
	startParallelPool()
	parallelLatest.Store(j)
	for range j.chunks - 1 {
		select {
		case parallelJobs <- j:
		default:
		}
	}
	j.run()
	if !parallelSpin(func() bool { return j.left.Load() == 0 }) {
		<-j.done
	}
	// Let go of f (and what it holds) unless a newer job took its place.
	parallelLatest.CompareAndSwap(j, nil)
	if j.failure != nil {
		panic(j.failure)
	}
}

// parallelSpinTime bounds the spinning of ParallelFor's callers and
// workers.
const parallelSpinTime = 200 * time.Microsecond

// parallelSpin calls ready until it returns true or parallelSpinTime has
// passed, and returns its last answer.
func parallelSpin(ready func() bool) bool {
	start := time.Now()
	for i := 1; ; i++ {
		if ready() {
			return true
		}
		if i%256 == 0 && time.Since(start) > parallelSpinTime {
			return false
		}
	}
}

// parallelJob is one ParallelFor call: chunks are claimed through next;
// left counts the chunks not yet finished, and done is closed when it
// reaches zero.
type parallelJob struct {
	f                func(lo, hi int)
	n, chunk, chunks int
	next, left       atomic.Int64
	done             chan struct{}
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
	defer func() {
		if j.left.Add(-1) == 0 {
			close(j.done)
		}
	}()
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
	// parallelLatest is the last job started, for the workers that watch
	// for jobs instead of waiting on parallelJobs; nil once it is done.
	parallelLatest atomic.Pointer[parallelJob]
)

// startParallelPool starts the workers once: GOMAXPROCS-1 of them (the
// caller is the last), at least one.
func startParallelPool() {
	parallelOnce.Do(func() {
		for range max(runtime.GOMAXPROCS(0)-1, 1) {
			go func() {
				// A chunk that reads mapped weights whose file was
				// truncated faults: as a panic, which ParallelFor raises
				// again on its caller, instead of killing the process.
				debug.SetPanicOnFault(true)
				for j := range parallelJobs {
					for j != nil {
						j.run()
						last := j
						j = nil
						parallelSpin(func() bool {
							if k := parallelLatest.Load(); k != nil && k != last {
								j = k
							}
							return j != nil
						})
					}
				}
			}()
		}
	})
}
