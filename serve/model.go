package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onnxvk/onnxvk"
)

// model is a loaded model: its session, shared by every request, and the
// batcher that feeds it from a bounded queue.
type model struct {
	cfg         ModelConfig
	sess        *onnxvk.Session
	meta        ModelMetadata
	inputs      map[string]onnxvk.ValueInfo
	outputNames []string
	// batching: requests may be merged along the first dimension, which
	// every input and output has and none fixes.
	batching bool
	log      *slog.Logger
	stats    *modelMetrics

	// queue holds admitted requests; queued counts them from admission
	// until their batch starts (the batcher's lookahead included), so that
	// at most cfg.QueueSize wait.
	queue  chan *pending
	queued atomic.Int64
	// stop ends the batcher; done is closed when it and its runs have
	// returned.
	stop   chan struct{}
	done   chan struct{}
	closed atomic.Bool
	once   sync.Once
}

// pending is a request waiting in a model's queue.
type pending struct {
	ctx    context.Context
	inputs map[string]*onnxvk.Tensor
	// only lists the outputs to compute, sorted (nil: all).
	only []string
	// key tells which requests may be merged: equal keys have the same
	// input names, types and shapes but for the first dimension, and the
	// same outputs; "" never merges. n is the request's first dimension.
	key      string
	n        int64
	enqueued time.Time
	// result receives the outputs or the error, once.
	result chan result
}

type result struct {
	outs map[string]*onnxvk.Tensor
	err  error
}

func newModel(c ModelConfig, sess *onnxvk.Session, stats *modelMetrics, log *slog.Logger) (*model, error) {
	meta, err := metadataOf(c, sess)
	if err != nil {
		return nil, err
	}
	m := &model{
		cfg: c, sess: sess, meta: meta, inputs: map[string]onnxvk.ValueInfo{}, log: log, stats: stats,
		queue: make(chan *pending, c.QueueSize), stop: make(chan struct{}), done: make(chan struct{}),
	}
	for _, vi := range sess.Inputs() {
		m.inputs[vi.Name] = vi
	}
	for _, vi := range sess.Outputs() {
		m.outputNames = append(m.outputNames, vi.Name)
	}
	inputs, outputs := sess.Inputs(), sess.Outputs()
	m.batching = batches(c, inputs, outputs)
	if m.batching && warmable(inputs) {
		sizes := []int64{1, int64(c.MaxBatchSize)}
		if plansEachBatchSize(c, inputs, outputs) {
			sizes = nil
			for n := range int64(c.MaxBatchSize) {
				sizes = append(sizes, n+1)
			}
		}
		m.warm(sizes)
	}
	stats.attach(m.queued.Load, sess.DeviceMemoryInUse, sess.PlanStats)
	go m.batcher()
	return m, nil
}

// batches reports whether requests to a model of these inputs and
// outputs may be merged: c's MaxBatchSize is above 1, and every input and
// output has a variable first dimension.
func batches(c ModelConfig, inputs, outputs []onnxvk.ValueInfo) bool {
	ok := c.MaxBatchSize > 1
	for _, vi := range append(slices.Clip(inputs), outputs...) {
		ok = ok && len(vi.Shape) > 0 && vi.Shape[0] < 0
	}
	return ok
}

// maxWarmElements bounds the elements of a warm-up input (see warmable).
const maxWarmElements = 1 << 28

// warmable reports whether a batching model of these inputs can be
// warmed up on zeros: no input holds strings, and every dimension of
// every input but the first is fixed, with at most maxWarmElements
// elements per row.
func warmable(inputs []onnxvk.ValueInfo) bool {
	for _, vi := range inputs {
		if vi.DType == onnxvk.String {
			return false
		}
		row := int64(1)
		for _, d := range vi.Shape[1:] {
			if d < 0 || d > 0 && row > maxWarmElements/d {
				return false
			}
			row *= d
		}
	}
	return true
}

// maxPlannedBatch is the largest max_batch_size for which a batching
// model plans each batch size on its own (see plansEachBatchSize).
const maxPlannedBatch = 16

// plansEachBatchSize reports whether the session of a model of these
// inputs and outputs is to plan each batch size on its own
// (onnxvk.WithoutShapeClassesIf, so that the model loads once), every one
// of them warmed at load: a batching model whose only variable dimension
// is the first, with a max_batch_size up to maxPlannedBatch. Its merged
// Runs then use plans with every size known, whose buffers are planned
// once and, under Vulkan, run on the GPU, where a shape class with the
// batch dimension symbolic allocates its intermediate tensors at each Run
// and, under Vulkan, runs the nodes of symbolic size on the CPU. Other
// batching models keep the session's shape classes: a plan for 1 row and
// a class for the other sizes.
func plansEachBatchSize(c ModelConfig, inputs, outputs []onnxvk.ValueInfo) bool {
	return c.MaxBatchSize <= maxPlannedBatch && batches(c, inputs, outputs) && warmable(inputs)
}

// warm runs the model once on zeros for each batch size, so that the
// session compiles the plans merged Runs use at load rather than during
// the first requests. A warm-up that fails is logged, and the first
// requests plan instead.
func (m *model) warm(sizes []int64) {
	for _, n := range sizes {
		inputs := map[string]*onnxvk.Tensor{}
		for name, vi := range m.inputs {
			shape := slices.Clone(vi.Shape)
			shape[0] = n
			elems := int64(1)
			for _, d := range shape {
				elems *= d
			}
			t, err := onnxvk.NewTensorBytes(vi.DType, shape, make([]byte, vi.DType.ByteSize(elems)))
			if err != nil {
				m.log.Warn("not warmed up", "model", m.cfg.Name, "err", err)
				return
			}
			inputs[name] = t
		}
		if _, err := m.sess.Run(context.Background(), inputs); err != nil {
			m.log.Warn("the warm-up Run failed; the first requests plan instead", "model", m.cfg.Name, "rows", n, "err", err)
			return
		}
	}
}

// prepare checks a request against the model and converts its inputs.
func (m *model) prepare(ctx context.Context, req *InferRequest) (*pending, error) {
	p := &pending{ctx: ctx, inputs: map[string]*onnxvk.Tensor{}, result: make(chan result, 1)}
	var key strings.Builder
	for i := range req.Inputs {
		in := &req.Inputs[i]
		vi, ok := m.inputs[in.Name]
		if !ok {
			return nil, Errorf(CodeInvalidArgument, "model %q has no input %q (its inputs: %s)", m.cfg.Name, in.Name, m.inputList())
		}
		if _, dup := p.inputs[in.Name]; dup {
			return nil, Errorf(CodeInvalidArgument, "input %q given twice", in.Name)
		}
		if want, _ := Datatype(vi.DType); in.Datatype != want {
			return nil, Errorf(CodeInvalidArgument, "input %q: datatype %s, but model %q takes %s", in.Name, in.Datatype, m.cfg.Name, want)
		}
		if err := checkShape(vi, in.Shape); err != nil {
			return nil, Errorf(CodeInvalidArgument, "input %q: shape %v, but model %q takes %v%s", in.Name, in.Shape, m.cfg.Name, vi.Shape, err)
		}
		t, err := in.Tensor()
		if err != nil {
			return nil, err
		}
		p.inputs[in.Name] = t
		if m.batching {
			if i == 0 {
				p.n = in.Shape[0]
			} else if in.Shape[0] != p.n {
				return nil, Errorf(CodeInvalidArgument, "input %q: %d rows, but input %q has %d: model %q batches its inputs along their first dimension, which must agree",
					in.Name, in.Shape[0], req.Inputs[0].Name, p.n, m.cfg.Name)
			}
			fmt.Fprintf(&key, "%s:%s%v;", in.Name, in.Datatype, in.Shape[1:])
		}
	}
	if limit := int64(m.cfg.MaxBatchSize); m.batching && p.n > limit {
		// As Triton does: a request is never split, and a Run of more
		// rows would plan while serving.
		return nil, Errorf(CodeInvalidArgument, "model %q: a batch of %d rows (the inputs' first dimension) is over the model's max_batch_size of %d",
			m.cfg.Name, p.n, limit)
	}
	for _, o := range req.Outputs {
		if !slices.Contains(m.outputNames, o.Name) {
			return nil, Errorf(CodeInvalidArgument, "model %q has no output %q (its outputs: %s)", m.cfg.Name, o.Name, strings.Join(m.outputNames, ", "))
		}
		if !slices.Contains(p.only, o.Name) {
			p.only = append(p.only, o.Name)
		}
	}
	slices.Sort(p.only)
	if p.n > 0 && p.n < int64(m.cfg.MaxBatchSize) {
		// Inputs sorted by name so that their order in the request does
		// not matter.
		parts := strings.Split(strings.TrimSuffix(key.String(), ";"), ";")
		slices.Sort(parts)
		p.key = strings.Join(parts, ";") + "|" + strings.Join(p.only, ",")
	}
	return p, nil
}

// checkShape compares a request's shape with the model's declared one:
// the rank and every fixed dimension must agree.
func checkShape(vi onnxvk.ValueInfo, shape []int64) error {
	if vi.Shape == nil {
		return nil
	}
	if len(shape) != len(vi.Shape) {
		return fmt.Errorf(" (rank %d, not %d)", len(vi.Shape), len(shape))
	}
	for i, d := range vi.Shape {
		if d >= 0 && d != shape[i] {
			return fmt.Errorf(" (dimension %d is %d, not %d)", i, d, shape[i])
		}
	}
	return nil
}

func (m *model) inputList() string {
	var names []string
	for _, vi := range m.sess.Inputs() {
		names = append(names, vi.Name)
	}
	return strings.Join(names, ", ")
}

// submit queues p and waits for its outputs or the end of ctx.
func (m *model) submit(ctx context.Context, p *pending) (map[string]*onnxvk.Tensor, error) {
	if m.queued.Add(1) > int64(m.cfg.QueueSize) {
		m.queued.Add(-1)
		return nil, m.fullError()
	}
	p.enqueued = time.Now()
	select {
	case m.queue <- p:
	case <-m.stop:
		m.queued.Add(-1)
		return nil, Errorf(CodeUnavailable, "model %q is unloading", m.cfg.Name)
	}
	select {
	case r := <-p.result:
		return r.outs, r.err
	case <-ctx.Done():
		return nil, ctxError(ctx, m.cfg.Name)
	}
}

// fullError is the error of a request refused for a full queue.
func (m *model) fullError() error {
	return Errorf(CodeResourceExhausted, "model %q: the queue of %d requests is full", m.cfg.Name, m.cfg.QueueSize)
}

// ctxError is the protocol error for the end of ctx.
func ctxError(ctx context.Context, model string) error {
	err := context.Cause(ctx)
	code := CodeCanceled
	if errors.Is(err, context.DeadlineExceeded) {
		code = CodeDeadlineExceeded
	}
	return &Error{Code: code, Msg: fmt.Sprintf("model %q: the request ended before its result (%v)", model, err), Err: err}
}

// batcher takes requests from the queue, merges those that can be merged,
// and starts a Run for each batch, at most cfg.Instances at once.
func (m *model) batcher() {
	var (
		runs sync.WaitGroup
		// ahead holds requests taken from the queue while filling a batch
		// they could not join; they go first next time.
		ahead []*pending
		slots = make(chan struct{}, m.cfg.Instances)
	)
	defer func() {
		runs.Wait()
		for _, p := range ahead {
			p.result <- result{err: Errorf(CodeUnavailable, "model %q unloaded before the request ran", m.cfg.Name)}
		}
		close(m.done)
	}()
	next := func(wait <-chan time.Time) *pending {
		if len(ahead) > 0 && wait == nil {
			p := ahead[0]
			ahead = ahead[1:]
			return p
		}
		// What is queued already joins before the delay is looked at.
		select {
		case p := <-m.queue:
			return p
		default:
		}
		select {
		case p := <-m.queue:
			return p
		case <-wait:
		case <-m.stop:
		}
		return nil
	}
	for {
		select {
		case slots <- struct{}{}:
		case <-m.stop:
			m.failQueued()
			return
		}
		first := next(nil)
		if first == nil {
			m.failQueued()
			return
		}
		batch := []*pending{first}
		if first.key != "" {
			batch, ahead = m.fill(batch, ahead, next)
		}
		m.queued.Add(-int64(len(batch)))
		runs.Add(1)
		go func() {
			defer func() { <-slots; runs.Done() }()
			m.run(batch)
		}()
	}
}

// fill adds to batch the requests of ahead and then of the queue that
// share its key, until the batch reaches MaxBatchSize or the first
// request has waited MaxQueueDelay; it returns the batch and the requests
// left ahead.
func (m *model) fill(batch, ahead []*pending, next func(<-chan time.Time) *pending) ([]*pending, []*pending) {
	first := batch[0]
	size := first.n
	max := int64(m.cfg.MaxBatchSize)
	var kept []*pending
	for _, p := range ahead {
		if p.key == first.key && size+p.n <= max {
			batch, size = append(batch, p), size+p.n
		} else {
			kept = append(kept, p)
		}
	}
	ahead = kept
	timer := time.NewTimer(time.Until(first.enqueued.Add(time.Duration(m.cfg.MaxQueueDelay))))
	defer timer.Stop()
	for size < max {
		p := next(timer.C)
		if p == nil {
			break
		}
		if p.key == first.key && size+p.n <= max {
			batch, size = append(batch, p), size+p.n
		} else {
			ahead = append(ahead, p)
		}
	}
	return batch, ahead
}

// failQueued answers the requests left in the queue when the model
// unloads.
func (m *model) failQueued() {
	for {
		select {
		case p := <-m.queue:
			m.queued.Add(-1)
			p.result <- result{err: Errorf(CodeUnavailable, "model %q unloaded before the request ran", m.cfg.Name)}
		default:
			return
		}
	}
}

// run runs a batch: one request alone, several merged along the first
// dimension and split back. A merged Run that fails runs each request
// alone, so that each gets its own result or error.
func (m *model) run(batch []*pending) {
	live := batch[:0]
	now := time.Now()
	for _, p := range batch {
		if p.ctx.Err() != nil {
			p.result <- result{err: ctxError(p.ctx, m.cfg.Name)}
			continue
		}
		m.stats.queueTime.observe(now.Sub(p.enqueued).Seconds())
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	m.stats.inflight.Add(int64(len(live)))
	defer m.stats.inflight.Add(-int64(len(live)))
	if len(live) > 1 {
		if outs, err := m.runMerged(live); err == nil {
			m.stats.batchSize.observe(float64(len(live)))
			for i, p := range live {
				p.result <- result{outs: outs[i]}
			}
			return
		} else if !errors.Is(err, onnxvk.ErrClosed) {
			m.log.Warn("a merged run failed; running its requests one by one", "model", m.cfg.Name, "requests", len(live), "err", err)
		}
	}
	for _, p := range live {
		m.stats.batchSize.observe(1)
		outs, err := m.sess.RunWith(p.ctx, p.inputs, onnxvk.RunOptions{Only: p.only})
		p.result <- result{outs: outs, err: err}
	}
}

// runMerged concatenates the batch's inputs along the first dimension,
// runs them once, and splits the outputs back.
func (m *model) runMerged(batch []*pending) ([]map[string]*onnxvk.Tensor, error) {
	inputs := map[string]*onnxvk.Tensor{}
	var total int64
	for _, p := range batch {
		total += p.n
	}
	for name := range batch[0].inputs {
		parts := make([]*onnxvk.Tensor, len(batch))
		for i, p := range batch {
			parts[i] = p.inputs[name]
		}
		t, err := concat(parts, total)
		if err != nil {
			return nil, err
		}
		inputs[name] = t
	}
	ctx, cancel := mergedContext(batch)
	defer cancel()
	outs, err := m.sess.RunWith(ctx, inputs, onnxvk.RunOptions{Only: batch[0].only})
	if err != nil {
		return nil, err
	}
	res := make([]map[string]*onnxvk.Tensor, len(batch))
	for i := range res {
		res[i] = map[string]*onnxvk.Tensor{}
	}
	for name, t := range outs {
		if s := t.Shape(); len(s) == 0 || s[0] != total {
			return nil, fmt.Errorf("output %q of shape %v does not have the batch's %d rows", name, s, total)
		}
		var at int64
		for i, p := range batch {
			part, err := slice(t, at, p.n)
			if err != nil {
				return nil, err
			}
			res[i][name] = part
			at += p.n
		}
	}
	return res, nil
}

// mergedContext returns a context that ends when every request of the
// batch has ended (a request that leaves does not cancel the others).
func mergedContext(batch []*pending) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	left := atomic.Int64{}
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, p := range batch {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel(context.Cause(p.ctx))
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(context.Canceled)
	}
}

// concat joins tensors of equal type and trailing shape along the first
// dimension.
func concat(parts []*onnxvk.Tensor, total int64) (*onnxvk.Tensor, error) {
	shape := parts[0].Shape()
	shape[0] = total
	if parts[0].DType() == onnxvk.String {
		var s []string
		for _, p := range parts {
			s = append(s, p.Strings()...)
		}
		return onnxvk.NewStringTensor(shape, s)
	}
	var raw []byte
	for _, p := range parts {
		raw = append(raw, p.Bytes()...)
	}
	return onnxvk.NewTensorBytes(parts[0].DType(), shape, raw)
}

// slice returns rows [at, at+n) of t's first dimension, copied.
func slice(t *onnxvk.Tensor, at, n int64) (*onnxvk.Tensor, error) {
	shape := t.Shape()
	rows := shape[0]
	shape[0] = n
	if t.DType() == onnxvk.String {
		s := t.Strings()
		per := int64(len(s)) / max(rows, 1)
		return onnxvk.NewStringTensor(shape, s[at*per:(at+n)*per])
	}
	b := t.Bytes()
	per := int64(len(b)) / max(rows, 1)
	return onnxvk.NewTensorBytes(t.DType(), shape, b[at*per:(at+n)*per])
}

// close stops the batcher (queued requests fail with UNAVAILABLE), waits
// for the runs in flight and closes the session.
func (m *model) close() {
	m.once.Do(func() {
		m.closed.Store(true)
		close(m.stop)
		<-m.done
		if err := m.sess.Close(); err != nil {
			m.log.Warn("closing the session", "model", m.cfg.Name, "err", err)
		}
	})
}
