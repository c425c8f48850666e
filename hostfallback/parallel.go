package hostfallback

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Threads is a thread budget: the most goroutines a loop of the CPU
// kernels computes on at once, the goroutine that runs the kernel
// included. The workers that help are lent by one process-wide pool of
// GOMAXPROCS-1 goroutines, and only while idle, so that sessions and
// concurrent Runs sharing the machine never run more pool workers than
// GOMAXPROCS-1 between them; a budget further bounds the workers lent to
// it at once to n-1, however many of its loops run (nested loops, or
// concurrent Runs sharing the budget). Each Session has its own (see
// onnxvk.WithThreads); a compiled program passes it to its kernels in
// Call.Threads.
//
// A nil *Threads is the whole pool: GOMAXPROCS goroutines, no count kept.
type Threads struct {
	n int
	// lent counts the pool workers working for the budget now; peak is
	// its highest value.
	lent, peak atomic.Int64
}

// NewThreads returns a budget of n goroutines; n <= 0 means GOMAXPROCS.
func NewThreads(n int) *Threads { return &Threads{n: max(n, 0)} }

// Workers returns the most goroutines a loop of t computes on:
// min(n, GOMAXPROCS), GOMAXPROCS for a nil t or n 0. Kernels that split
// their work by hand size their parts by it.
func (t *Threads) Workers() int {
	p := runtime.GOMAXPROCS(0)
	if t != nil && t.n > 0 {
		return min(t.n, p)
	}
	return p
}

// PeakLent returns the most pool workers lent to t at once so far.
func (t *Threads) PeakLent() int {
	if t == nil {
		return 0
	}
	return int(t.peak.Load())
}

// lend reserves a pool worker for t, reporting false when t's workers are
// all lent.
func (t *Threads) lend() bool {
	if t == nil {
		return true
	}
	limit := int64(t.Workers() - 1)
	for {
		k := t.lent.Load()
		if k >= limit {
			return false
		}
		if t.lent.CompareAndSwap(k, k+1) {
			for {
				p := t.peak.Load()
				if k+1 <= p || t.peak.CompareAndSwap(p, k+1) {
					return true
				}
			}
		}
	}
}

// giveBack returns a worker lend reserved.
func (t *Threads) giveBack() {
	if t != nil {
		t.lent.Add(-1)
	}
}

// For splits [0, n) into contiguous chunks of at least grain items and
// runs f on each chunk, on the calling goroutine and on up to Workers()-1
// idle workers of the persistent pool lent to t, so that a parallel loop
// costs no goroutine start. Small loops run on the calling goroutine. The
// caller claims chunks too and only waits for chunks a worker has already
// started, so nested calls (from inside f) cannot deadlock: with every
// worker busy or t's all lent, the caller runs all chunks itself. A panic
// in a chunk is raised again on the calling goroutine once the other
// chunks are done, so that the caller's recover sees it instead of the
// process dying.
//
// A worker that has finished a job watches for the next one, and a caller
// waits for the workers' chunks, spinning for up to parallelSpinTime
// before they sleep: waking a sleeping thread can take tens of
// microseconds (on virtual machines), longer than many chunks take.
func (t *Threads) For(n, grain int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	workers := min(t.Workers(), (n+grain-1)/grain)
	if workers <= 1 {
		f(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	j := &parallelJob{f: f, threads: t, n: n, chunk: chunk, chunks: (n + chunk - 1) / chunk, done: make(chan struct{})}
	j.left.Store(int64(j.chunks))
	startParallelPool()
	parallelLatest.Store(j)
	for range j.chunks - 1 {
		if !t.lend() {
			break
		}
		select {
		case parallelJobs <- j:
			continue
		default:
			t.giveBack()
		}
		break
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

// parallelSpinTime bounds the spinning of For's callers and
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

// parallelJob is one Threads.For call, for threads: chunks are claimed through next;
// left counts the chunks not yet finished, and done is closed when it
// reaches zero.
type parallelJob struct {
	f                func(lo, hi int)
	threads          *Threads
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
	// parallelWorkers is the number of workers started; parallelMu
	// serializes starting more.
	parallelWorkers atomic.Int64
	parallelMu      sync.Mutex
	// parallelLatest is the last job started, for the workers that watch
	// for jobs instead of waiting on parallelJobs; nil once it is done.
	parallelLatest atomic.Pointer[parallelJob]
)

// startParallelPool starts workers until there are GOMAXPROCS-1 of them
// (the caller is the last), at least one; GOMAXPROCS raised later adds
// workers at the next loop.
func startParallelPool() {
	want := int64(max(runtime.GOMAXPROCS(0)-1, 1))
	if parallelWorkers.Load() >= want {
		return
	}
	parallelMu.Lock()
	defer parallelMu.Unlock()
	for parallelWorkers.Load() < want {
		go parallelWorker()
		parallelWorkers.Add(1)
	}
}

// parallelWorker runs the jobs it is handed, and those it finds watching
// parallelLatest after one when their budget lends it, giving itself back
// to each job's budget when done.
func parallelWorker() {
	// A chunk that reads mapped weights whose file was truncated faults:
	// as a panic, which For raises again on its caller, instead of killing
	// the process.
	debug.SetPanicOnFault(true)
	for j := range parallelJobs {
		for j != nil {
			j.run()
			j.threads.giveBack()
			last := j
			j = nil
			parallelSpin(func() bool {
				if k := parallelLatest.Load(); k != nil && k != last {
					if k.threads.lend() {
						j = k
					} else {
						last = k
					}
				}
				return j != nil
			})
		}
	}
}
