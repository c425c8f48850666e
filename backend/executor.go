package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrMissingInput is wrapped when a required graph input is not given.
var ErrMissingInput = errors.New("missing input")

// Executor runs one Plan. It is safe for concurrent use: every Run has its
// own Frame and arenas, taken from a pool, and holds no device beyond the
// segment it runs there, so concurrent Runs of a plan with pipeline stages
// overlap their stages.
type Executor struct {
	plan     *planner.Plan
	devices  map[string]Device
	segments []segment
	// after lists, by segment, the segments it must wait for: the latest
	// earlier one on each device it touches (a transfer touches two).
	// parallel is set when some segment need not wait for the one before
	// it, so that a Run starts segments as their devices come free.
	after    [][]int
	parallel bool
	// programs counts the compute segments: RunBatch keeps at most that
	// many requests in flight.
	programs int
	arenas   map[string]*sync.Pool
	// foreign lists memory that outputs must not share with the caller:
	// the plan's constants.
	foreign [][]byte
	// hostReads marks the values that a host step reads as they are
	// (not through a transfer): a Resident input among them is read to
	// the host first.
	hostReads map[int]bool
}

// segment is a run of compute steps on one device and logical device, or
// one transfer. logical is the logical device its trace events belong to.
type segment struct {
	program  Program
	transfer *planner.Step
	logical  string
	// device runs the program.
	device string
	// steps are the plan's steps of the segment.
	steps []planner.Step
}

// NewExecutor compiles p for the given devices, which must include every
// device the plan names. When it fails, it releases what it compiled.
func NewExecutor(p *planner.Plan, devices []Device) (_ *Executor, err error) {
	e := &Executor{plan: p, devices: map[string]Device{}, arenas: map[string]*sync.Pool{}}
	defer func() {
		if err != nil {
			e.Release()
		}
	}()
	for _, d := range devices {
		e.devices[d.Name()] = d
	}
	for i := 0; i < len(p.Steps); {
		st := &p.Steps[i]
		if st.Kind == planner.Transfer {
			for _, name := range []string{st.From, st.To} {
				if e.devices[name] == nil {
					return nil, fmt.Errorf("backend: plan transfers to or from device %q, which is not open: %w", name, ErrDeviceUnavailable)
				}
			}
			e.segments = append(e.segments, segment{transfer: st, logical: transferLogical(p, i), steps: p.Steps[i : i+1]})
			i++
			continue
		}
		j := i + 1
		for j < len(p.Steps) && p.Steps[j].Kind == planner.Compute && p.Steps[j].Device == st.Device && p.Steps[j].Logical == st.Logical {
			j++
		}
		dev := e.devices[st.Device]
		if dev == nil {
			return nil, fmt.Errorf("backend: plan places %s on device %q, which is not open: %w", st.Node, st.Device, ErrDeviceUnavailable)
		}
		prog, err := dev.Compile(p, p.Steps[i:j])
		if err != nil {
			return nil, fmt.Errorf("backend: compiling steps %d..%d for %s: %w", i, j-1, st.Device, err)
		}
		e.segments = append(e.segments, segment{program: prog, logical: st.Logical, device: st.Device, steps: p.Steps[i:j]})
		e.programs++
		i = j
	}
	e.order()
	for dev, size := range p.ArenaBytes {
		e.arenas[dev] = &sync.Pool{New: func() any { return graph.AllocBytes(size) }}
	}
	for _, t := range p.Constants {
		e.foreign = append(e.foreign, t.Data)
	}
	e.hostReads = map[int]bool{}
	for _, st := range p.Steps {
		// Shape and Size read the type of a Resident input as it is.
		if st.Kind == planner.Compute && st.Device == planner.HostDevice && !ops.Has(st.Node.Domain, st.Node.OpType, ops.TypeOnly) {
			for _, v := range append(slices.Clone(st.In), st.Captured...) {
				e.hostReads[v] = true
			}
		}
	}
	for _, v := range p.Outputs {
		if !slices.ContainsFunc(p.Steps, func(st planner.Step) bool { return slices.Contains(st.Out, v) }) {
			e.hostReads[v] = true // an input passed through as an output
		}
	}
	return e, nil
}

// order fills e.after and e.parallel. Every value a segment reads lives
// on a device it touches, and a device's segments keep the plan's order,
// so a segment that waits for the latest earlier segment on each of its
// devices sees every value it reads written. Arena memory is not kept
// apart that way: a value moved to another device may share its memory
// (a Vulkan device reads the host tensor it was given), so a segment that
// writes an arena slot also waits for every earlier segment that used an
// overlapping slot of the same arena.
func (e *Executor) order() {
	last := map[string]int{}
	e.after = make([][]int, len(e.segments))
	for k, s := range e.segments {
		devices := []string{s.device}
		if s.transfer != nil {
			devices = []string{s.transfer.From, s.transfer.To}
		}
		for _, d := range devices {
			if j, ok := last[d]; ok && !slices.Contains(e.after[k], j) {
				e.after[k] = append(e.after[k], j)
			}
			last[d] = k
		}
		if k > 0 && !slices.Contains(e.after[k], k-1) {
			e.parallel = true
		}
	}
	if !e.parallel {
		return
	}
	type use struct {
		seg    int
		lo, hi int64
	}
	used := map[string][]use{}
	for k, s := range e.segments {
		var written []*planner.Buffer
		for _, st := range s.steps {
			for _, vs := range [][]int{st.In, st.Captured, st.Out} {
				for _, v := range vs {
					if b := e.slot(v); b != nil {
						used[b.Device] = append(used[b.Device], use{k, b.Offset, b.Offset + b.Size})
					}
				}
			}
			if st.Kind == planner.Compute {
				for _, v := range st.Out {
					if b := e.slot(v); b != nil {
						written = append(written, b)
					}
				}
			}
		}
		for _, b := range written {
			for _, u := range used[b.Device] {
				if u.seg < k && u.lo < b.Offset+b.Size && b.Offset < u.hi && !slices.Contains(e.after[k], u.seg) {
					e.after[k] = append(e.after[k], u.seg)
				}
			}
		}
	}
}

// slot returns the arena buffer that holds value v (its root's, for a
// view), or nil when v has none.
func (e *Executor) slot(v int) *planner.Buffer {
	if v < 0 {
		return nil
	}
	b := e.plan.Buffers[v]
	if b != nil && b.AliasOf >= 0 {
		b = e.plan.Buffers[b.AliasOf]
	}
	return b
}

// transferLogical returns the logical device of the transfer p.Steps[i]:
// that of the next compute step reading the value, else that of the last
// one before it, else "".
func transferLogical(p *planner.Plan, i int) string {
	v := p.Steps[i].In[0]
	for _, st := range p.Steps[i+1:] {
		if st.Kind == planner.Compute && slices.Contains(st.In, v) {
			return st.Logical
		}
	}
	for k := i - 1; k >= 0; k-- {
		if p.Steps[k].Kind == planner.Compute {
			return p.Steps[k].Logical
		}
	}
	return ""
}

// Release frees what the executor's programs hold on their devices (see
// Releaser). No Run may be in flight, and none may follow.
func (e *Executor) Release() {
	for _, s := range e.segments {
		if r, ok := s.program.(Releaser); ok {
			r.Release()
		}
	}
}

// Bytes is the memory the executor holds for its Runs: the arena of each
// device that has no Sizer program (the host's, which a Run takes from a
// pool) and what each Sizer program reports. Weights, which devices share
// between plans, are not counted.
func (e *Executor) Bytes() int64 {
	var n int64
	sized := map[string]bool{}
	for _, s := range e.segments {
		if z, ok := s.program.(Sizer); ok {
			n += z.Bytes()
			sized[s.device] = true
		}
	}
	for dev, size := range e.plan.ArenaBytes {
		if !sized[dev] {
			n += size
		}
	}
	return n
}

// Plan returns the executor's plan.
func (e *Executor) Plan() *planner.Plan { return e.plan }

// Run executes the plan on inputs (by graph input name) and returns the
// graph outputs by name. Graph inputs with an initializer may be omitted.
// The returned values are owned by the caller. ctx is checked between
// steps.
func (e *Executor) Run(ctx context.Context, inputs map[string]graph.Value) (map[string]graph.Value, error) {
	return e.RunWith(ctx, inputs, RunOptions{})
}

// RunOptions choose how a Run hands over its outputs.
type RunOptions struct {
	// Keep names outputs to leave on the device that computes them, as
	// Resident values (an output computed on the host comes back as a host
	// tensor).
	Keep []string
	// Into gives host tensors, by output name, to write outputs into: each
	// of its output's element type and shape, filled and returned instead
	// of a new tensor.
	Into map[string]*graph.Tensor
}

// RunWith is Run with options. Inputs may be Resident values: a device
// step that reads one on its own device reads it in place, and it is
// copied to the host only for a host step.
func (e *Executor) RunWith(ctx context.Context, inputs map[string]graph.Value, o RunOptions) (map[string]graph.Value, error) {
	req := 0
	if tr := TraceFrom(ctx); tr != nil {
		req = tr.reserve(1)
	}
	return e.run(ctx, inputs, o, nil, 0, req)
}

// RunBatch runs the plan on each element of inputs, as Run does, as a
// pipeline: request i runs a segment once request i-1 has finished it, so
// that each segment (a pipeline stage's steps on its logical device)
// works on one request at a time, in order, while the later segments work
// on the earlier requests. At most one request per compute segment is in
// flight. outputs[i] belongs to inputs[i]. The first request to fail stops the
// others; its error names its index. Under a trace, the requests take
// consecutive request numbers in order.
func (e *Executor) RunBatch(ctx context.Context, inputs []map[string]graph.Value) ([]map[string]graph.Value, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base := 0
	if tr := TraceFrom(ctx); tr != nil {
		base = tr.reserve(len(inputs))
	}
	order := newPipeline(len(inputs), len(e.segments))
	outputs := make([]map[string]graph.Value, len(inputs))
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failure  error
	)
	slots := make(chan struct{}, max(1, e.programs))
	for i, in := range inputs {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			order.finishAll(i)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			out, err := e.run(ctx, in, RunOptions{}, order, i, base+i)
			if err != nil {
				failOnce.Do(func() {
					failure = fmt.Errorf("request %d: %w", i, err)
					cancel()
				})
				return
			}
			outputs[i] = out
		})
	}
	wg.Wait()
	if failure != nil {
		return nil, failure
	}
	for i, out := range outputs {
		if out == nil {
			return nil, fmt.Errorf("request %d: %w", i, ctx.Err())
		}
	}
	return outputs, nil
}

// pipeline orders the segments of a batch: done[i][s] is closed once
// request i has finished segment s or given up.
type pipeline struct {
	done [][]chan struct{}
	// closed marks, by request, the channels of done already closed;
	// mu guards it, as a request may finish segments from several
	// goroutines.
	mu     sync.Mutex
	closed [][]bool
}

func newPipeline(requests, segments int) *pipeline {
	p := &pipeline{done: make([][]chan struct{}, requests), closed: make([][]bool, requests)}
	for i := range p.done {
		p.done[i] = make([]chan struct{}, segments)
		p.closed[i] = make([]bool, segments)
		for s := range p.done[i] {
			p.done[i][s] = make(chan struct{})
		}
	}
	return p
}

// wait blocks until request i may run segment s: request i-1 is done with
// it. A nil pipeline (a single Run) never waits.
func (p *pipeline) wait(ctx context.Context, i, s int) error {
	if p == nil || i == 0 {
		return nil
	}
	select {
	case <-p.done[i-1][s]:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish marks segment s of request i done.
func (p *pipeline) finish(i, s int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed[i][s] {
		p.closed[i][s] = true
		close(p.done[i][s])
	}
}

// finishAll marks every segment request i has not finished done, so that
// the requests after it are not held up when it fails.
func (p *pipeline) finishAll(i int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for s, closed := range p.closed[i] {
		if !closed {
			p.closed[i][s] = true
			close(p.done[i][s])
		}
	}
}

// run is RunWith as the trace's request req and the i-th request of
// order, a batch's pipeline (nil for a single Run).
func (e *Executor) run(ctx context.Context, inputs map[string]graph.Value, o RunOptions, order *pipeline, i, req int) (map[string]graph.Value, error) {
	defer order.finishAll(i)
	p := e.plan
	f := &Frame{Plan: p, Values: map[string][]graph.Value{}, Arenas: map[string][]byte{}}
	output := func(name, what string) (int, error) {
		v, ok := p.ValueIndex[name]
		if !ok || !slices.Contains(p.Outputs, v) {
			return 0, fmt.Errorf("backend: model %q: %q is not an output, %s", p.Model.Name, name, what)
		}
		return v, nil
	}
	for _, name := range o.Keep {
		v, err := output(name, "to keep on the device")
		if err != nil {
			return nil, err
		}
		if f.Keep == nil {
			f.Keep = map[int]bool{}
		}
		f.Keep[v] = true
	}
	for name, t := range o.Into {
		v, err := output(name, "to write into")
		if err != nil {
			return nil, err
		}
		if want := p.Types[v]; want == nil || t == nil || !want.Shape.Known() || t.DType != want.Elem || !slices.Equal(t.Shape, want.Shape.Ints()) {
			return nil, fmt.Errorf("backend: model %q: output %q is %s, the tensor to write it into %s", p.Model.Name, name, p.Types[v], describe(t))
		}
		if f.Into == nil {
			f.Into = map[int]*graph.Tensor{}
		}
		f.Into[v] = t
	}
	for name := range e.devices {
		f.Values[name] = make([]graph.Value, len(p.Values))
	}
	host := f.Values[planner.HostDevice]
	if host == nil {
		host = make([]graph.Value, len(p.Values))
		f.Values[planner.HostDevice] = host
	}
	for i, t := range p.Constants {
		host[i] = t
	}
	// Clipped so that appending copies: e.foreign is shared by concurrent Runs.
	foreign := slices.Clip(e.foreign)
	for _, i := range p.Inputs {
		v, ok := inputs[p.Values[i]]
		if !ok {
			if host[i] == nil {
				return nil, fmt.Errorf("backend: model %q: input %q: %w", p.Model.Name, p.Values[i], ErrMissingInput)
			}
			continue
		}
		if r, ok := v.(Resident); ok && e.hostReads[i] {
			t, err := r.Read()
			if err != nil {
				return nil, fmt.Errorf("backend: model %q: reading input %q from %s: %w", p.Model.Name, p.Values[i], r.DeviceName(), err)
			}
			v = t
		}
		host[i] = v
		if t, ok := v.(*graph.Tensor); ok {
			foreign = append(foreign, t.Data)
		}
	}
	for dev, pool := range e.arenas {
		f.Arenas[dev] = pool.Get().([]byte)
	}
	defer func() {
		for dev, pool := range e.arenas {
			pool.Put(f.Arenas[dev])
		}
	}()
	if err := e.runSegments(ctx, f, order, i, req); err != nil {
		return nil, err
	}
	for _, a := range f.Arenas {
		foreign = append(foreign, a)
	}
	out := make(map[string]graph.Value, len(p.Outputs))
	for _, i := range p.Outputs {
		v := host[i]
		if v == nil {
			return nil, fmt.Errorf("backend: model %q: output %q was not computed", p.Model.Name, p.Values[i])
		}
		if t := f.Into[i]; t != nil {
			h, ok := v.(*graph.Tensor)
			if !ok {
				return nil, fmt.Errorf("backend: model %q: output %q is a %s, not a host tensor to write into", p.Model.Name, p.Values[i], v.ValueType())
			}
			if h != t {
				copy(t.Data, h.Data)
				copy(t.Strings, h.Strings)
			}
			v = t
		} else {
			v = ownValue(v, foreign)
		}
		out[p.Values[i]] = v
	}
	return out, nil
}

// describe names the type of a tensor to write an output into.
func describe(t *graph.Tensor) string {
	if t == nil {
		return "is nil"
	}
	return fmt.Sprintf("is %s%v", t.DType, t.Shape)
}

// runSegments runs the segments of request i of order (see run): in the
// plan's order, or, when the plan allows it, each on its own goroutine as
// soon as the segments in e.after are done, so that segments on different
// devices run at once. The first failure stops the segments not yet
// started.
func (e *Executor) runSegments(ctx context.Context, f *Frame, order *pipeline, i, req int) error {
	tr := TraceFrom(ctx)
	one := func(ctx context.Context, k int) error {
		if err := order.wait(ctx, i, k); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sctx := ctx
		if tr != nil {
			sctx = WithTrace(ctx, tr.scope(e.segments[k].logical, req))
		}
		// Mapped weights whose file was truncated fault when read: an
		// error for this Run, on whichever goroutine runs the segment.
		if err := graph.CatchFaults(func() error { return e.runSegment(sctx, f, e.segments[k]) }); err != nil {
			return err
		}
		order.finish(i, k)
		return nil
	}
	if !e.parallel {
		for k := range e.segments {
			if err := one(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make([]chan struct{}, len(e.segments))
	for k := range done {
		done[k] = make(chan struct{})
	}
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failure  error
	)
	for k := range e.segments {
		wg.Go(func() {
			defer close(done[k])
			for _, j := range e.after[k] {
				select {
				case <-done[j]:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				return
			}
			if err := one(ctx, k); err != nil {
				failOnce.Do(func() {
					failure = err
					cancel()
				})
			}
		})
	}
	wg.Wait()
	if failure != nil {
		return failure
	}
	return ctx.Err()
}

// runSegment runs s's program, or its transfer recorded as a trace event
// with the bytes it moved. A panic there is a bug of a kernel or a device,
// not of the model: as the last line of defence, it becomes an error
// naming the segment's nodes, so that it fails this Run only.
func (e *Executor) runSegment(ctx context.Context, f *Frame, s segment) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if err = graph.FaultError(r); err == nil {
				err = fmt.Errorf("panic: %v", r)
			}
			err = fmt.Errorf("backend: model %q: %s: %w", f.Plan.Model.Name, describeSteps(f.Plan, s), err)
		}
	}()
	if s.transfer == nil {
		return s.program.Run(ctx, f)
	}
	tr := TraceFrom(ctx)
	var t0 time.Duration
	if tr != nil {
		t0 = tr.Now()
	}
	st := s.transfer
	moved, err := e.transfer(f, st)
	if err != nil || tr == nil || moved < 0 {
		return err
	}
	tr.Add(TraceEvent{Name: "transfer " + f.Plan.Values[st.In[0]] + " " + st.From + "→" + st.To, Op: "transfer",
		Device: st.To, Start: t0, Dur: tr.Now() - t0, Bytes: moved})
	return nil
}

// describeSteps names the work of segment s of plan p: its node, or its
// first and last nodes, and its device; or the value it moves.
func describeSteps(p *planner.Plan, s segment) string {
	if st := s.transfer; st != nil {
		return fmt.Sprintf("moving %q from %s to %s", p.Values[st.In[0]], st.From, st.To)
	}
	first, last := s.steps[0].Node, s.steps[len(s.steps)-1].Node
	if len(s.steps) == 1 {
		return fmt.Sprintf("%s on %s", first, s.device)
	}
	return fmt.Sprintf("the %d steps %s … %s on %s", len(s.steps), first, last, s.device)
}

// transfer moves value st.In[0] from st.From to st.To and returns the
// bytes it moved: st.Bytes where the plan knows the size, else that of the
// host tensor; -1 when the value is absent and nothing moved.
func (e *Executor) transfer(f *Frame, st *planner.Step) (int64, error) {
	v := f.Values[st.From][st.In[0]]
	if v == nil {
		return -1, nil
	}
	if _, ok := v.(Resident); ok && st.To == planner.HostDevice && f.Keep[st.In[0]] {
		f.Values[st.To][st.In[0]] = v
		return 0, nil
	}
	from := v
	var err error
	if st.To == planner.HostDevice {
		v, err = e.devices[st.From].Download(v)
	} else {
		v, err = e.devices[st.To].Upload(v)
	}
	if err != nil {
		return 0, fmt.Errorf("backend: moving %q from %s to %s: %w", f.Plan.Values[st.In[0]], st.From, st.To, err)
	}
	f.Values[st.To][st.In[0]] = v
	if st.Bytes >= 0 {
		return st.Bytes, nil
	}
	for _, x := range []graph.Value{from, v} {
		if t, ok := x.(*graph.Tensor); ok {
			return int64(len(t.Data)), nil
		}
	}
	return 0, nil
}

// ownValue returns v, or a copy of it where it shares memory with any of
// the foreign buffers (arenas, weights, the caller's inputs).
func ownValue(v graph.Value, foreign [][]byte) graph.Value {
	switch x := v.(type) {
	case Resident:
		return x
	case *graph.Tensor:
		for _, b := range foreign {
			if Overlaps(x.Data, b) {
				return x.Clone()
			}
		}
		return x
	case *graph.Sequence:
		items := make([]graph.Value, len(x.Items))
		for i, it := range x.Items {
			items[i] = ownValue(it, foreign)
		}
		return &graph.Sequence{Elem: x.Elem, Items: items}
	case *graph.Optional:
		if x.V == nil {
			return x
		}
		return &graph.Optional{Elem: x.Elem, V: ownValue(x.V, foreign)}
	}
	return v
}

// Overlaps reports whether two byte slices share memory.
func Overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}
