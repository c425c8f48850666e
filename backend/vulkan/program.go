package vulkan

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// Supports reports whether a kernel handles n with these input types: the
// ops of the shaders in package shaders on float32 tensors of non-empty
// shape that fit a storage buffer binding, with the attributes and shapes
// each kernel's lowering accepts. A shape with unknown sizes (a class
// plan's) is accepted when the lowering accepts it with trialSize in
// their place: its program lowers the node again for the sizes of each
// Run (see classProgram). A lowering that panics on the node (a bug) does
// not accept it: the CPU runs it.
func (d *Device) Supports(q planner.Query) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if graph.FaultError(r) != nil {
				panic(r) // a changed mapped file, for graph.CatchFaults
			}
			ok = false
		}
	}()
	if shapeOnly(q) {
		return true
	}
	if _, ok = lower(q, d.caps()); ok {
		return true
	}
	if t, sym := trial(q); sym {
		_, ok = lower(t, d.caps())
	}
	return ok
}

// caps returns the device's limits for lowering. Matrix products and
// convolutions use the shared-memory schedules everywhere but on CPU
// implementations.
func (d *Device) caps() caps {
	c := caps{maxElems: min(int64(d.info.limits.MaxStorageBufferRange)/4, math.MaxInt32),
		tiledMatMul: d.tiledMatMul, tiledConv: d.tiledConv, convSplits: d.convSplits, depthwiseConv: d.depthwiseConv, schedule: d.schedule, gemvColumns: d.gemvColumns, matmulSplits: d.matmulSplits, halfWeights: d.half.on, half16: d.half.storage, int16: d.info.Int16, intDot: d.intDot,
		subgroupRows: d.subgroupRows, shuffledGEMV: d.subgroupRows && d.info.SubgroupShuffle, rowAttention: d.rowAttention, splitAttention: d.splitAttention, wideAttention: d.wideAttention, subgroupSize: int64(d.info.SubgroupSize), sharedMem: int64(d.info.limits.MaxComputeSharedMemorySize),
		matrixUnit: d.matrixUnit, matrixFragments: d.matrixFragments}
	if d.subgroupRows {
		c.rowWorkgroup = rowWorkgroup(d.info.SubgroupSize)
	}
	return c
}

// region tells where a bound value lives.
type region uint8

const (
	inArena region = iota
	inIO
	inWeight
)

// loc is a value's place in device memory.
type loc struct {
	region    region
	off, size uint64
	weight    *buffer
}

func (l loc) overlaps(m loc) bool {
	return l.region == m.region && l.region != inWeight && l.off < m.off+m.size && m.off < l.off+l.size
}

// ioValue is a value copied into or out of the io buffer by Run.
type ioValue struct {
	v         int
	off, size uint64
	dtype     graph.DType
	shape     []int64
}

type dispatch struct {
	pipe     *pipeline
	bindings []loc
	push     []byte
	groups   uint32
	// barrier: a dependency on earlier dispatches precedes this one.
	barrier bool
	// node is the index in program.nodes of the node it belongs to.
	node int
}

// program is the compiled form of a plan segment; it implements
// backend.Program.
type program struct {
	d          *Device
	dispatches []dispatch
	arenaSize  uint64
	ioSize     uint64
	ins, outs  []ioValue
	release    []int
	// nodes are the segment's nodes in order, for traces; notes says, for
	// each, why it records no dispatch of its own ("" when it does, or
	// when it is fused into the node fused holds there, named only when a
	// trace asks: see note).
	nodes []*graph.Node
	notes []string
	fused []*graph.Node
	// weights are the resident weights the program binds, which it holds
	// until Release (see holdWeights).
	weights []weightKey
	// known are the values computed on the host from the sizes (see
	// evaluateShapes) that later steps or the caller read: a Run hands
	// them over as host tensors.
	known map[int]*graph.Tensor
	// onDevice marks the outputs that only later segments of the device
	// read: a Run hands them over as DeviceTensors, which the segment
	// that reads them last releases (see keep).
	onDevice map[int]bool
	// reserveOut gives, by value, the bytes to allocate for an output kept
	// on the device when more than its own: a class program's for the
	// largest sizes (see classProgram.size).
	reserveOut map[int]uint64

	contexts contextPool
	// lastNs is the device time of the latest Run in nanoseconds.
	lastNs atomic.Int64
}

// Compile lowers every step to a dispatch and fixes where each value
// lives: in the arena at the plan's offset, in the weights uploaded once
// per device, or in the io buffer for values that enter or leave the
// segment. Command buffers are recorded when a Run first needs one. A
// segment of a class plan, where some sizes are symbolic, becomes a class
// program instead, which does all that at Run for the sizes it is given
// (see classProgram).
func (d *Device) Compile(p *planner.Plan, steps []planner.Step) (backend.Program, error) {
	if err := d.checkLost(); err != nil {
		return nil, err
	}
	if sym := symbolicInputs(p, steps); sym != nil {
		return d.newClassProgram(p, steps, sym)
	}
	e, err := evaluateShapes(p, steps, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	pr, err := d.compile(e)
	if err != nil {
		return nil, d.fault(err)
	}
	return pr, nil
}

// compile compiles the steps of e, which evaluateShapes made.
func (d *Device) compile(e *evaluated) (_ *program, err error) {
	p, steps := e.plan, e.steps
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("vulkan: %s is closed", d.name)
	}
	// held are the weights this program holds (see holdWeights), given
	// back when the compile fails.
	var held []weightKey
	defer func() {
		if err != nil {
			d.releaseWeights(held)
		}
	}()
	// at is the node being lowered or placed, nil between nodes; a panic
	// is a bug of the lowering, reported as an error naming at, or the
	// segment.
	var at *graph.Node
	defer func() {
		if r := recover(); r != nil {
			where := describeNodes(stepNodes(steps))
			if at != nil {
				where = at.String()
			}
			if err = graph.FaultError(r); err == nil {
				err = fmt.Errorf("panic: %v", r)
			}
			err = fmt.Errorf("vulkan: compiling %s: %w", where, err)
		}
	}()
	inSegment := make(map[*planner.Step]bool, len(steps))
	for i := range steps {
		inSegment[&steps[i]] = true
	}
	// escapes holds the values read after the segment; of those, elsewhere
	// the ones that a host step, a transfer or the caller reads, which a
	// Run must bring back to the host. The others pass to later segments
	// of this device as DeviceTensors (see program.keep).
	escapes, elsewhere := map[int]bool{}, map[int]bool{}
	for _, v := range p.Outputs {
		escapes[v], elsewhere[v] = true, true
	}
	for i := range p.Steps {
		if st := &p.Steps[i]; !inSegment[st] {
			for _, v := range slices.Concat(st.In, st.Captured) {
				escapes[v] = true
				if st.Kind != planner.Compute || st.Device != d.name {
					elsewhere[v] = true
				}
			}
		}
	}
	// Lower every step first, so that the weights they bind are made
	// resident in one batch.
	launches := make([]*launch, len(steps))
	caps := d.caps()
	for i := range steps {
		st := &steps[i]
		at = st.Node
		if l := e.lowered[st.Node]; l != nil {
			launches[i] = l
			continue
		}
		l, ok := lower(queryOf(p, st), caps)
		if !ok {
			return nil, fmt.Errorf("vulkan: %s: no kernel for these input types", st.Node)
		}
		launches[i] = l
	}
	at = nil
	// compiled holds the step compiled at each index: the step itself, a
	// chain's stand-in at the chain's last index, nil inside a chain.
	// fusedInto holds, at each nil of compiled, the node whose dispatch
	// does that step's work.
	compiled, fusedInto := make([]*planner.Step, len(steps)), make([]*graph.Node, len(steps))
	for i := range steps {
		compiled[i] = &steps[i]
	}
	// private holds the values that get an io slot of their own instead of
	// their arena slot (see foldSplits).
	private := map[int]bool{}
	// reads counts the steps of the plan that read each value.
	reads := readCounts(p)
	foldSplits(p, steps, launches, compiled, fusedInto, escapes, reads, private, caps)
	foldTransposes(p, steps, launches, compiled, fusedInto, escapes, reads)
	foldProductTails(p, steps, launches, compiled, fusedInto, escapes, reads)
	foldMaskedSoftmax(p, steps, launches, compiled, fusedInto, escapes, reads)
	for _, c := range findChains(p, steps, launches, escapes, reads) {
		for i := c.first; i < c.last; i++ {
			compiled[i], fusedInto[i] = nil, steps[c.last].Node
		}
		compiled[c.last], launches[c.last] = &c.step, c.l
	}
	useMatrixUnits(caps, launches)
	splitProducts(caps, launches, compiled)
	var keys []weightKey
	// mapped holds the constants that go to host-visible blocks (see
	// makeResident): the values computed from the sizes and, for a class
	// program's binding (e.lowered set), the params its chains and
	// lowerings made anew, which would otherwise cost a discrete GPU a
	// staging submission, and a wait, for every binding: every decode
	// step of a decoder (an H100's profile showed them).
	mapped := e.computed
	if e.lowered != nil {
		mapped = maps.Clone(e.computed)
	}
	for i, st := range compiled {
		if st == nil {
			continue
		}
		l := launches[i]
		if l.params != nil {
			keys = append(keys, weightKey{t: l.params})
			if e.lowered != nil {
				mapped[l.params] = true
			}
		}
		for _, part := range l.parts() {
			for _, s := range part.bindings {
				if s.out || s.isParams() || s.isScratch() {
					continue
				}
				c := p.Fixed(st.In[s.k])
				if c == nil && l.halfInput(s.k) || c != nil && l.halfInput(s.k) && c.DType != graph.Float {
					return nil, fmt.Errorf("vulkan: %s: input %d (%q) is read as an fp16 weight but is no float32 constant", st.Node, s.k, p.Values[st.In[s.k]])
				}
				if c != nil {
					keys = append(keys, weightKey{t: c, half: l.halfInput(s.k)})
				}
			}
		}
	}
	keys = uniqueKeys(keys)
	err = d.makeResident(keys, mapped)
	held = d.holdWeights(keys)
	if err != nil {
		return nil, fmt.Errorf("vulkan: %s: uploading weights: %w", d.name, err)
	}
	align := d.bindAlign()
	inside, inPlace := concatsInPlace(p, steps, compiled, escapes, reads, align)
	pr := &program{d: d, weights: held, known: e.escaping}
	// scratch is the most scratch a node asks for (see launch.scratch);
	// scratchAt holds the dispatch and binding index of each scratch
	// binding.
	var scratch uint64
	var scratchAt [][2]int
	// where holds the place of each bound value, halfAt that of the
	// weights bound as fp16.
	where, halfAt := map[int]loc{}, map[int]loc{}
	ioSlot := func(size uint64) loc {
		l := loc{region: inIO, off: pr.ioSize, size: size}
		pr.ioSize += (size + align - 1) / align * align
		return l
	}
	// place puts value v, of type t, in its own io slot, and has Run
	// read it back when it leaves the segment.
	place := func(v int, t *graph.Type) loc {
		size := uint64(t.Elem.ByteSize(graph.NumElements(t.Shape.Ints())))
		where[v] = ioSlot(size)
		if escapes[v] {
			pr.outs = append(pr.outs, ioValue{v: v, off: where[v].off, size: size, dtype: t.Elem, shape: t.Shape.Ints()})
		}
		return where[v]
	}
	for i, st := range compiled {
		at = steps[i].Node
		if st == nil {
			pr.nodes = append(pr.nodes, steps[i].Node)
			pr.notes = append(pr.notes, "")
			pr.fused = append(pr.fused, fusedInto[i])
			pr.release = append(pr.release, steps[i].Release...)
			continue
		}
		l := launches[i]
		for _, part := range l.parts() {
			for _, s := range part.bindings {
				if s.out || s.isParams() || s.isScratch() {
					continue
				}
				v := st.In[s.k]
				if c := p.Fixed(v); c != nil {
					k := weightKey{t: c, half: l.halfInput(s.k)}
					r := d.resident(k)
					at := where
					if k.half {
						at = halfAt
					}
					at[v] = loc{region: inWeight, off: r.off, size: r.size, weight: r.block}
					continue
				}
				if _, ok := where[v]; ok {
					continue
				}
				size := uint64(p.Types[v].Elem.ByteSize(graph.NumElements(p.Types[v].Shape.Ints())))
				where[v] = ioSlot(size)
				pr.ins = append(pr.ins, ioValue{v: v, off: where[v].off, size: size})
			}
		}
		if inPlace[i] {
			pr.nodes = append(pr.nodes, st.Node)
			pr.notes = append(pr.notes, "written in place by its inputs")
			pr.fused = append(pr.fused, nil)
			pr.release = append(pr.release, st.Release...)
			continue
		}
		if pr.view(st, l, where, escapes) {
			pr.nodes = append(pr.nodes, st.Node)
			pr.notes = append(pr.notes, "a view of its input")
			pr.fused = append(pr.fused, nil)
			pr.release = append(pr.release, st.Release...)
			continue
		}
		parts := l.parts()
		dss := make([]dispatch, len(parts))
		for j, part := range parts {
			pipe, err := d.pipelineFor(part)
			if err != nil {
				return nil, err
			}
			groups := part.groups
			if groups == 0 {
				groups = (part.elems + workgroupSize - 1) / workgroupSize
			}
			dss[j] = dispatch{pipe: pipe, push: part.push, node: len(pr.nodes), groups: uint32(max(1, min(groups, maxGroups,
				int64(d.info.limits.MaxComputeWorkGroupCount[0]))))}
		}
		for _, part := range parts {
			for _, s := range part.bindings {
				if !s.out || s.isScratch() {
					continue
				}
				out := st.Out[s.k]
				if _, ok := where[out]; ok {
					continue
				}
				dt := l.outType(s.k)
				size := uint64(dt.ByteSize(graph.NumElements(l.outShapes[s.k])))
				if private[out] {
					place(out, p.Types[out])
					continue
				}
				if part, ok := inside[out]; ok {
					// A Concat's input, written in place: the Concat's
					// output has an io slot of its own, never reused.
					c, ok := where[part.concat]
					if !ok {
						c = place(part.concat, p.Types[part.concat])
					}
					where[out] = loc{region: inIO, off: c.off + part.off, size: size}
					continue
				}
				b := p.Buffers[out]
				switch {
				case escapes[out] || b == nil || b.AliasOf >= 0 || b.Device != d.name || uint64(b.Offset)%align != 0:
					where[out] = ioSlot(size)
					if escapes[out] {
						pr.outs = append(pr.outs, ioValue{v: out, off: where[out].off, size: size, dtype: dt, shape: l.outShapes[s.k]})
					}
				default:
					where[out] = loc{region: inArena, off: uint64(b.Offset), size: size}
					pr.arenaSize = max(pr.arenaSize, uint64(b.Offset)+size)
				}
			}
		}
		for j, part := range parts {
			for _, s := range part.bindings {
				switch {
				case s.isParams():
					r := d.resident(weightKey{t: l.params})
					dss[j].bindings = append(dss[j].bindings, loc{region: inWeight, off: r.off, size: r.size, weight: r.block})
				case s.isScratch():
					// Placed past the arena's values below, once the
					// arena's size is known.
					scratchAt = append(scratchAt, [2]int{len(pr.dispatches) + j, len(dss[j].bindings)})
					dss[j].bindings = append(dss[j].bindings, loc{region: inArena, size: l.scratch})
					scratch = max(scratch, l.scratch)
				case s.out:
					dss[j].bindings = append(dss[j].bindings, where[st.Out[s.k]])
				case l.halfInput(s.k):
					dss[j].bindings = append(dss[j].bindings, halfAt[st.In[s.k]])
				default:
					dss[j].bindings = append(dss[j].bindings, where[st.In[s.k]])
				}
			}
		}
		pr.dispatches = append(pr.dispatches, dss...)
		pr.release = append(pr.release, st.Release...)
		pr.nodes = append(pr.nodes, st.Node)
		pr.notes = append(pr.notes, "")
		pr.fused = append(pr.fused, nil)
	}
	at = nil
	for _, out := range pr.outs {
		if !elsewhere[out.v] {
			if pr.onDevice == nil {
				pr.onDevice = map[int]bool{}
			}
			pr.onDevice[out.v] = true
		}
	}
	if scratch > 0 {
		// One scratch region past the values serves every node: the
		// barriers order one node's uses after another's.
		off := (pr.arenaSize + align - 1) / align * align
		pr.arenaSize = off + scratch
		for _, at := range scratchAt {
			pr.dispatches[at[0]].bindings[at[1]].off = off
		}
	}
	pr.placeBarriers()
	d.programs = append(d.programs, pr)
	return pr, nil
}

// isView reports whether n's output is input 0's bytes under another
// shape (ops.View).
func isView(n *graph.Node) bool { return ops.Has(n.Domain, n.OpType, ops.View) }

// view places the output of step st, lowered to l, on its input's memory
// when the node is a view (see isView): no dispatch, no copy. It does not
// when the output leaves the segment from memory the host cannot read
// back (the arena, a weight); then st runs its copy. It reports whether
// st became a view.
func (pr *program) view(st *planner.Step, l *launch, where map[int]loc, escapes map[int]bool) bool {
	n := st.Node
	if !isView(n) || len(st.Out) != 1 || len(l.then) > 0 {
		return false
	}
	in, ok := where[st.In[0]]
	out := st.Out[0]
	size := uint64(l.outType(0).ByteSize(graph.NumElements(l.outShapes[0])))
	if !ok || in.size != size || escapes[out] && in.region != inIO {
		return false
	}
	where[out] = in
	if escapes[out] {
		pr.outs = append(pr.outs, ioValue{v: out, off: in.off, size: size, dtype: l.outType(0), shape: l.outShapes[0]})
	}
	return true
}

// placeBarriers marks each dispatch that reads or writes memory an earlier
// dispatch wrote, or writes memory an earlier one read, since the last
// barrier.
func (pr *program) placeBarriers() {
	var reads, writes []loc
	hits := func(l loc, set []loc) bool {
		for _, m := range set {
			if l.overlaps(m) {
				return true
			}
		}
		return false
	}
	for i := range pr.dispatches {
		ds := &pr.dispatches[i]
		need := false
		for k, l := range ds.bindings {
			if hits(l, writes) || ds.pipe.writes[k] && hits(l, reads) {
				need = true
			}
		}
		if need {
			ds.barrier = true
			reads, writes = nil, nil
		}
		for k, l := range ds.bindings {
			if ds.pipe.writes[k] {
				writes = append(writes, l)
			} else {
				reads = append(reads, l)
			}
		}
	}
}

// execContext is what one Run at a time uses: memory, descriptor sets and
// the command buffer recorded for them.
type execContext struct {
	arena, io *buffer
	// stage is the host's side of io where the host cannot use io's
	// memory directly (see buffer.hostReadable): inputs are copied from it and outputs
	// to it in the command buffer. nil when io is mapped.
	stage    *buffer
	cmds     *commands
	descPool uintptr
	query    uintptr
	sets     []uintptr
	// moving is re-recorded by each Run that reads or keeps DeviceTensors
	// (see recordMoves).
	moving *commands
	// profile and profileQuery are the profiling variant of cmds and its
	// timestamps, recorded by the first traced Run (see profiled).
	profile      *commands
	profileQuery uintptr
	// owner is the program whose descriptor sets and command buffers the
	// context holds (see rebind).
	owner *program
	// held is the device memory of the buffers when the context was last
	// added or returned to its pool; the pool's mu guards it, so the pool
	// can report its memory while contexts it lent out are being rebound.
	held int64
}

// Run copies the segment's inputs into the io buffer, submits the recorded
// command buffer, waits for it, and copies the outputs that later steps or
// the caller need back to the host. Under a trace, on a device with
// timestamp queries, it submits the profiling variant of the command
// buffer instead and records one event per node (see profiled).
func (pr *program) Run(ctx context.Context, f *backend.Frame) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return pr.d.fault(pr.run(ctx, f))
}

func (pr *program) run(ctx context.Context, f *backend.Frame) error {
	ec, err := pr.acquire()
	if err != nil {
		return err
	}
	defer pr.contexts.put(ec)
	return pr.runIn(ctx, f, ec)
}

// runIn is Run in context ec, recorded for pr (see rebind).
func (pr *program) runIn(ctx context.Context, f *backend.Frame, ec *execContext) error {
	tr := backend.TraceFrom(ctx)
	var t0 time.Duration
	if tr != nil {
		t0 = tr.Now()
	}
	vals := f.Values[pr.d.name]
	var (
		moved uint64
		mv    moves
	)
	for _, in := range pr.ins {
		var data []byte
		switch v := vals[in.v].(type) {
		case *Tensor:
			data = v.t.Data
		case *graph.Tensor:
			data = v.Data
		case *DeviceTensor:
			b := v.buffer()
			if b == nil || v.d != pr.d || v.size != in.size {
				return fmt.Errorf("vulkan: input %q is a device tensor of %d bytes on %s (released: %v); the plan expects %d bytes on %s",
					f.Plan.Values[in.v], v.size, v.d.name, b == nil, in.size, pr.d.name)
			}
			mv.in = append(mv.in, devCopy{v: in.v, b: b, off: in.off, size: in.size})
			continue
		default:
			return fmt.Errorf("vulkan: input %q of %s is not a tensor", f.Plan.Values[in.v], pr.d.name)
		}
		if uint64(len(data)) != in.size {
			return fmt.Errorf("vulkan: input %q has %d bytes, the plan expects %d", f.Plan.Values[in.v], len(data), in.size)
		}
		copy(ec.host()[in.off:], data)
		moved += in.size
	}
	kept, err := pr.keep(f, &mv)
	if err != nil {
		return err
	}
	cmds := ec.cmds
	profiling := tr != nil && ec.query != 0 && mv.empty()
	switch {
	case profiling:
		cmds, err = pr.profiled(ec)
	case !mv.empty():
		cmds, err = pr.recordMoves(ec, &mv)
	}
	if err != nil {
		releaseAll(kept)
		return err
	}
	var submitted time.Duration
	if tr != nil {
		submitted = tr.Now()
	}
	if err := pr.d.submit(cmds); err != nil {
		releaseAll(kept)
		return err
	}
	pr.d.counters.dispatches.Add(int64(len(pr.dispatches)))
	var device time.Duration
	var spans []span
	switch {
	case profiling:
		if spans, device, err = pr.readProfile(ec); err != nil {
			return err
		}
		pr.lastNs.Store(int64(device))
	case ec.query != 0:
		var ts [2]uint64
		if err := vk.GetQueryPoolResults(pr.d.dev, ec.query, 0, ts[:]); err != nil {
			return fmt.Errorf("vulkan: vkGetQueryPoolResults: %w", err)
		}
		device = pr.d.ticks(ts[0], ts[1])
		pr.lastNs.Store(int64(device))
	}
	for _, out := range pr.outs {
		if t := kept[out.v]; t != nil {
			vals[out.v] = t
			continue
		}
		t := f.Into[out.v]
		if t == nil || t.DType != out.dtype || !slices.Equal(t.Shape, out.shape) {
			t = graph.NewTensor(out.dtype, out.shape)
		}
		copy(t.Data, ec.host()[out.off:out.off+out.size])
		vals[out.v] = &Tensor{t: t}
		moved += out.size
	}
	pr.d.counters.hostDeviceBytes.Add(int64(moved))
	for v, t := range pr.known {
		vals[v] = &Tensor{t: t.Clone()}
	}
	for _, v := range pr.release {
		if t, ok := vals[v].(*DeviceTensor); ok && t.passing {
			t.Release()
		}
		vals[v] = nil
	}
	switch {
	case spans != nil:
		pr.traceNodes(tr, submitted, spans)
	case tr != nil:
		tr.Add(pr.traceEvent(t0, tr.Now()-t0, device))
	}
	return nil
}

// traceEvent describes a Run of the segment that started at start, took
// host time on the host and device time on the device: one event for the
// whole command buffer, which is submitted at once, where the device
// cannot time its nodes.
func (pr *program) traceEvent(start, host, device time.Duration) backend.TraceEvent {
	ev := backend.TraceEvent{Device: pr.d.name, Start: start, Dur: host, DeviceDur: device, Steps: len(pr.nodes)}
	switch len(pr.nodes) {
	case 0:
	case 1:
		ev.Name, ev.Op = pr.nodes[0].Name, pr.nodes[0].OpType
	default:
		first, last := pr.nodes[0], pr.nodes[len(pr.nodes)-1]
		ev.Name, ev.Op = fmt.Sprintf("%d nodes, %s … %s", len(pr.nodes), first.Name, last.Name), "segment"
	}
	return ev
}

// Bytes is the device memory one Run of the program uses: its arena and
// io buffer (backend.Sizer).
func (pr *program) Bytes() int64 { return int64(pr.arenaSize + pr.ioSize) }

// DeviceTime returns the time the device spent on the latest Run, measured
// with timestamp queries; 0 when the device has none.
func (pr *program) DeviceTime() time.Duration { return time.Duration(pr.lastNs.Load()) }

func (pr *program) acquire() (*execContext, error) {
	if err := pr.d.checkLost(); err != nil {
		return nil, err
	}
	return pr.contexts.get(pr.d.dev, pr.newContext, pr.released)
}

// released is the error of a Run of a program that was released, or
// whose device closed.
func (pr *program) released() error {
	return fmt.Errorf("vulkan: %s of %s is released (its plan was dropped or the device closed)", pr.describe(), pr.d.name)
}

// Release frees the program's execution contexts (arena, io and staging
// memory, command buffers, descriptor sets) and the weights no other
// program binds. No Run of the program may be in flight, and none may
// follow: a later one fails. Releasing twice, or after the device closed,
// does nothing.
func (pr *program) Release() {
	pr.d.mu.Lock()
	defer pr.d.mu.Unlock()
	pr.releaseLocked()
}

// releaseLocked is Release with the device's mu held.
func (pr *program) releaseLocked() {
	d := pr.d
	i := slices.Index(d.programs, pr)
	if d.closed || i < 0 {
		return
	}
	d.programs = slices.Delete(d.programs, i, i+1)
	pr.destroy()
	d.releaseWeights(pr.weights)
}

// destroy frees every context. The device's mu is held and the program's
// contexts are idle.
func (pr *program) destroy() { pr.contexts.close(pr.d.dev) }

// contextPool holds the execution contexts of a program, one per
// concurrent Run: free are those idle, all every one.
type contextPool struct {
	mu        sync.Mutex
	closed    bool
	free, all []*execContext
}

// get returns an idle context, or a new one from fresh; once the pool is
// closed, the error of released.
func (cp *contextPool) get(dev uintptr, fresh func() (*execContext, error), released func() error) (*execContext, error) {
	cp.mu.Lock()
	if cp.closed {
		cp.mu.Unlock()
		return nil, released()
	}
	if n := len(cp.free); n > 0 {
		ec := cp.free[n-1]
		cp.free = cp.free[:n-1]
		cp.mu.Unlock()
		return ec, nil
	}
	cp.mu.Unlock()
	ec, err := fresh()
	if err != nil {
		return nil, err
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.closed {
		ec.destroy(dev)
		return nil, released()
	}
	ec.held = ec.bufferBytes()
	cp.all = append(cp.all, ec)
	return ec, nil
}

func (cp *contextPool) put(ec *execContext) {
	held := ec.bufferBytes()
	cp.mu.Lock()
	ec.held = held
	cp.free = append(cp.free, ec)
	cp.mu.Unlock()
}

// isClosed reports whether close was called.
func (cp *contextPool) isClosed() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.closed
}

// bytes is the device memory of the contexts' buffers, each as it was
// when the context was last added or returned to the pool (a Run in
// flight may be growing the buffers of the one it holds).
func (cp *contextPool) bytes() int64 {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var n int64
	for _, ec := range cp.all {
		n += ec.held
	}
	return n
}

// bufferBytes is the device memory of ec's buffers; only the goroutine
// that holds ec may call it.
func (ec *execContext) bufferBytes() int64 {
	var n uint64
	for _, b := range []*buffer{ec.arena, ec.io, ec.stage} {
		if b != nil {
			n += b.size
		}
	}
	return int64(n)
}

// close frees every context, which must be idle; a later get fails.
func (cp *contextPool) close(dev uintptr) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, ec := range cp.all {
		ec.destroy(dev)
	}
	cp.all, cp.free, cp.closed = nil, nil, true
}

func (ec *execContext) destroy(dev uintptr) {
	for _, c := range []*commands{ec.cmds, ec.moving} {
		if c != nil {
			c.destroy(dev)
		}
	}
	if ec.descPool != 0 {
		vk.DestroyDescriptorPool(dev, ec.descPool)
	}
	if ec.query != 0 {
		vk.DestroyQueryPool(dev, ec.query)
	}
	if ec.profile != nil {
		ec.profile.destroy(dev)
		vk.DestroyQueryPool(dev, ec.profileQuery)
	}
	for _, b := range []*buffer{ec.arena, ec.io, ec.stage} {
		if b != nil {
			b.free(dev)
		}
	}
}

// newContext allocates a context for pr: its memory and descriptor sets,
// and its command buffer recorded.
func (pr *program) newContext() (_ *execContext, err error) {
	ec, err := pr.d.newExecContext()
	if err != nil {
		return nil, err
	}
	if err := pr.rebind(ec); err != nil {
		ec.destroy(pr.d.dev)
		return nil, err
	}
	return ec, nil
}

// newExecContext allocates a context with no memory and no descriptor
// sets yet, which rebind gives it: its command buffer and, where the
// device has timestamps, its query pool.
func (d *Device) newExecContext() (_ *execContext, err error) {
	ec := &execContext{}
	if ec.cmds, err = d.newCommands(); err != nil {
		return nil, err
	}
	if d.info.Timestamps {
		qci := &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: 2}
		if err := vk.CreateQueryPool(d.dev, qci, &ec.query); err != nil {
			ec.destroy(d.dev)
			return nil, fmt.Errorf("vulkan: vkCreateQueryPool: %w", err)
		}
	}
	return ec, nil
}

// rebind makes ec a context of pr: its arena, io and staging buffers hold
// at least what pr needs (a buffer that is too small is replaced by one
// of the size needed or twice its size, whichever is more, so that a
// class program's contexts, which serve programs of growing sizes, are
// reallocated a logarithmic number of times), its descriptor sets point
// pr's dispatches at them, and its command buffer is recorded for pr. A
// context that rebind fails on belongs to no program and may be rebound.
func (pr *program) rebind(ec *execContext) error {
	d := pr.d
	ec.owner = nil
	grow := func(b **buffer, need uint64, host bool, what string) error {
		if *b != nil && (*b).size >= need {
			return nil
		}
		size := need
		if *b != nil {
			size = max(need, 2*(*b).size)
			(*b).free(d.dev)
			*b = nil
		}
		nb, err := d.newBuffer(size, host)
		if err != nil {
			return fmt.Errorf("vulkan: %s: allocating the %s (%d bytes) of %s: %w", d.name, what, size, pr.describe(), err)
		}
		*b = nb
		return nil
	}
	if err := grow(&ec.arena, pr.arenaSize, false, "arena"); err != nil {
		return err
	}
	if err := grow(&ec.io, pr.ioSize, false, "input/output buffer"); err != nil {
		return err
	}
	if !ec.io.hostReadable() {
		if err := grow(&ec.stage, ec.io.size, true, "staging buffer"); err != nil {
			return err
		}
	}
	if ec.descPool != 0 {
		vk.DestroyDescriptorPool(d.dev, ec.descPool)
		ec.descPool, ec.sets = 0, nil
	}
	if ec.profile != nil {
		ec.profile.destroy(d.dev)
		vk.DestroyQueryPool(d.dev, ec.profileQuery)
		ec.profile, ec.profileQuery = nil, 0
	}
	if len(pr.dispatches) > 0 {
		if err := pr.bind(ec); err != nil {
			return err
		}
	}
	if err := vk.ResetCommandPool(d.dev, ec.cmds.pool); err != nil {
		return fmt.Errorf("vulkan: vkResetCommandPool: %w", err)
	}
	if err := pr.record(ec, ec.cmds.cmd, ec.query, false, nil); err != nil {
		return err
	}
	ec.owner = pr
	return nil
}

// bind allocates the descriptor sets of ec, one per dispatch, and points
// them at the context's memory and the weights.
func (pr *program) bind(ec *execContext) error {
	d := pr.d
	nbind := 0
	for _, ds := range pr.dispatches {
		nbind += len(ds.bindings)
	}
	size := &vk.DescriptorPoolSize{Type: vk.DescriptorTypeStorageBuffer, DescriptorCount: uint32(nbind)}
	pci := &vk.DescriptorPoolCreateInfo{SType: vk.StructureTypeDescriptorPoolCreateInfo, MaxSets: uint32(len(pr.dispatches)),
		PoolSizeCount: 1, PPoolSizes: unsafe.Pointer(size)}
	if err := vk.CreateDescriptorPool(d.dev, pci, &ec.descPool); err != nil {
		return fmt.Errorf("vulkan: vkCreateDescriptorPool: %w", err)
	}
	layouts := make([]uintptr, len(pr.dispatches))
	for i, ds := range pr.dispatches {
		layouts[i] = ds.pipe.setLayout
	}
	sets := make([]uintptr, len(pr.dispatches))
	ai := &vk.DescriptorSetAllocateInfo{SType: vk.StructureTypeDescriptorSetAllocateInfo, DescriptorPool: ec.descPool,
		DescriptorSetCount: uint32(len(layouts)), PSetLayouts: unsafe.Pointer(&layouts[0])}
	if err := vk.AllocateDescriptorSets(d.dev, ai, &sets[0]); err != nil {
		return fmt.Errorf("vulkan: vkAllocateDescriptorSets: %w", err)
	}
	infos := make([]vk.DescriptorBufferInfo, 0, nbind)
	writes := make([]vk.WriteDescriptorSet, 0, nbind)
	for i, ds := range pr.dispatches {
		for k, l := range ds.bindings {
			// Whole words: shaders access 1-byte tensors by words.
			info := vk.DescriptorBufferInfo{Offset: l.off, Range: (l.size + 3) &^ 3}
			switch l.region {
			case inArena:
				info.Buffer = ec.arena.buf
			case inIO:
				info.Buffer = ec.io.buf
			case inWeight:
				info.Buffer = l.weight.buf
			}
			infos = append(infos, info)
			writes = append(writes, vk.WriteDescriptorSet{SType: vk.StructureTypeWriteDescriptorSet, DstSet: sets[i],
				DstBinding: uint32(k), DescriptorCount: 1, DescriptorType: vk.DescriptorTypeStorageBuffer,
				PBufferInfo: unsafe.Pointer(&infos[len(infos)-1])})
		}
	}
	vk.UpdateDescriptorSets(d.dev, writes)
	ec.sets = sets
	return nil
}

// host returns the memory the host writes the inputs to and reads the
// outputs from: io's mapping, or the staging buffer's.
func (ec *execContext) host() []byte {
	if ec.stage != nil {
		return ec.stage.mapped
	}
	return ec.io.mapped
}

// record fills command buffer cb for context ec: a barrier against the
// previous use of the context's memory, the inputs copied from the
// staging buffer where there is one, the dispatches with barriers where
// placeBarriers put them, the outputs copied to the staging buffer, and a
// barrier that makes the results visible to the host. With a query pool,
// timestamps go to query 0 at the start and query 1 at the end. With
// profile set, every dispatch waits for the one before and is followed by
// a timestamp in query 1 + its index instead. mv, when not nil, replaces
// the host's bytes of some inputs by DeviceTensors and copies some outputs
// to DeviceTensors instead of the host.
func (pr *program) record(ec *execContext, cb, query uintptr, profile bool, mv *moves) error {
	if err := vk.BeginCommandBuffer(cb, &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo}); err != nil {
		return fmt.Errorf("vulkan: vkBeginCommandBuffer: %w", err)
	}
	if query != 0 {
		n := uint32(2)
		if profile {
			n = uint32(len(pr.dispatches) + 1)
		}
		vk.CmdResetQueryPool(cb, query, 0, n)
		vk.CmdWriteTimestamp(cb, vk.PipelineStageTopOfPipeBit, query, 0)
	}
	const (
		shaderRW   = vk.AccessShaderReadBit | vk.AccessShaderWriteBit
		transferRW = vk.AccessTransferReadBit | vk.AccessTransferWriteBit
		work       = vk.PipelineStageComputeShaderBit | vk.PipelineStageTransferBit
	)
	vk.CmdPipelineBarrier(cb, work|vk.PipelineStageHostBit, work,
		&vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessShaderWriteBit | vk.AccessTransferWriteBit | vk.AccessHostWriteBit,
			DstAccessMask: shaderRW | transferRW})
	copied := false
	if ec.stage != nil {
		if r := ioRegions(pr.ins, mv.inValues()); len(r) > 0 {
			vk.CmdCopyBufferRegions(cb, ec.stage.buf, ec.io.buf, r)
			copied = true
		}
	}
	for _, c := range mv.ins() {
		vk.CmdCopyBuffer(cb, c.b.buf, ec.io.buf, &vk.BufferCopy{DstOffset: c.off, Size: wordSize(c.size)})
		copied = true
	}
	if copied {
		vk.CmdPipelineBarrier(cb, vk.PipelineStageTransferBit, vk.PipelineStageComputeShaderBit,
			&vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessTransferWriteBit, DstAccessMask: shaderRW})
	}
	between := &vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessShaderWriteBit, DstAccessMask: shaderRW}
	for i := range pr.dispatches {
		ds := &pr.dispatches[i]
		if ds.barrier || profile && i > 0 {
			vk.CmdPipelineBarrier(cb, vk.PipelineStageComputeShaderBit, vk.PipelineStageComputeShaderBit, between)
		}
		vk.CmdBindPipeline(cb, ds.pipe.pipeline)
		vk.CmdBindDescriptorSet(cb, ds.pipe.layout, &ec.sets[i])
		vk.CmdPushConstants(cb, ds.pipe.layout, ds.push)
		vk.CmdDispatch(cb, ds.groups, 1, 1)
		if profile {
			vk.CmdWriteTimestamp(cb, vk.PipelineStageBottomOfPipeBit, query, uint32(i+1))
		}
	}
	var staged []vk.BufferCopy
	if ec.stage != nil {
		staged = ioRegions(pr.outs, mv.outValues())
	}
	if len(staged) > 0 || len(mv.outs()) > 0 {
		vk.CmdPipelineBarrier(cb, vk.PipelineStageComputeShaderBit, vk.PipelineStageTransferBit,
			&vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessShaderWriteBit, DstAccessMask: vk.AccessTransferReadBit})
		if len(staged) > 0 {
			vk.CmdCopyBufferRegions(cb, ec.io.buf, ec.stage.buf, staged)
		}
		for _, c := range mv.outs() {
			vk.CmdCopyBuffer(cb, ec.io.buf, c.b.buf, &vk.BufferCopy{SrcOffset: c.off, Size: wordSize(c.size)})
		}
	}
	vk.CmdPipelineBarrier(cb, work, vk.PipelineStageHostBit,
		&vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessShaderWriteBit | vk.AccessTransferWriteBit, DstAccessMask: vk.AccessHostReadBit})
	if query != 0 && !profile {
		vk.CmdWriteTimestamp(cb, vk.PipelineStageBottomOfPipeBit, query, 1)
	}
	if err := vk.EndCommandBuffer(cb); err != nil {
		return fmt.Errorf("vulkan: vkEndCommandBuffer: %w", err)
	}
	return nil
}

// ioRegions returns the copies of the io ranges of vs between the io
// buffer and the staging buffer, which share one layout, but for the
// values in skip (those copied to or from a DeviceTensor instead); a range
// that several values share (a view and its input) is copied once, and is
// copied whenever one of them is not skipped: a view the host reads of a
// value kept on the device.
func ioRegions(vs []ioValue, skip map[int]bool) []vk.BufferCopy {
	var r []vk.BufferCopy
	seen := map[uint64]bool{}
	for _, v := range vs {
		if !seen[v.off] && !skip[v.v] {
			seen[v.off] = true
			r = append(r, vk.BufferCopy{SrcOffset: v.off, DstOffset: v.off, Size: wordSize(v.size)})
		}
	}
	return r
}

// wordSize rounds a copy's size up to whole 32-bit words, as the bindings
// are: shaders access 1-byte tensors by words.
func wordSize(size uint64) uint64 { return max((size+3)&^3, 4) }

// moves are the copies of one Run between the io buffer and DeviceTensors:
// in, inputs read from device tensors instead of the host; out, outputs
// kept on the device.
type moves struct {
	in, out []devCopy
}

// devCopy is a copy between the io range (off, size) of value v and
// buffer b.
type devCopy struct {
	v         int
	b         *buffer
	off, size uint64
}

func (mv *moves) empty() bool { return mv == nil || len(mv.in)+len(mv.out) == 0 }

func (mv *moves) ins() []devCopy {
	if mv == nil {
		return nil
	}
	return mv.in
}

func (mv *moves) outs() []devCopy {
	if mv == nil {
		return nil
	}
	return mv.out
}

func (mv *moves) inValues() map[int]bool  { return values(mv.ins()) }
func (mv *moves) outValues() map[int]bool { return values(mv.outs()) }

func values(cs []devCopy) map[int]bool {
	m := make(map[int]bool, len(cs))
	for _, c := range cs {
		m[c.v] = true
	}
	return m
}

// keep allocates a DeviceTensor for each output of the segment that the
// Run keeps on the device (Frame.Keep), and for each that only later
// segments of the device read (onDevice: a transient one, which the
// segment that reads it last releases), and adds its copy to mv.
func (pr *program) keep(f *backend.Frame, mv *moves) (map[int]*DeviceTensor, error) {
	var kept map[int]*DeviceTensor
	for _, out := range pr.outs {
		if !f.Keep[out.v] && !pr.onDevice[out.v] || kept[out.v] != nil {
			continue
		}
		b, err := pr.d.tensorBuffer(max(out.size, pr.reserveOut[out.v]))
		if err != nil {
			releaseAll(kept)
			return nil, fmt.Errorf("vulkan: %s: keeping output %q (%d bytes) on the device: %w", pr.d.name, f.Plan.Values[out.v], out.size, err)
		}
		if kept == nil {
			kept = map[int]*DeviceTensor{}
		}
		t := &DeviceTensor{d: pr.d, typ: graph.TensorType(out.dtype, graph.ShapeOf(out.shape...)), size: out.size, buf: b}
		if !f.Keep[out.v] {
			t.transient()
		}
		kept[out.v] = t
		mv.out = append(mv.out, devCopy{v: out.v, b: b, off: out.off, size: out.size})
	}
	return kept, nil
}

func releaseAll(ts map[int]*DeviceTensor) {
	for _, t := range ts {
		t.Release()
	}
}

// recordMoves records ec's command buffer for a Run with the device
// copies mv into ec.moving, which each such Run records anew.
func (pr *program) recordMoves(ec *execContext, mv *moves) (*commands, error) {
	d := pr.d
	if ec.moving == nil {
		c, err := d.newCommands()
		if err != nil {
			return nil, err
		}
		ec.moving = c
	} else if err := vk.ResetCommandPool(d.dev, ec.moving.pool); err != nil {
		return nil, fmt.Errorf("vulkan: vkResetCommandPool: %w", err)
	}
	if err := pr.record(ec, ec.moving.cmd, ec.query, false, mv); err != nil {
		return nil, err
	}
	return ec.moving, nil
}

var _ backend.Device = (*Device)(nil)
