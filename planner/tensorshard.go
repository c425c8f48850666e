package planner

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Communication kinds of the nodes the planner inserts to apply sharding
// specs (see Comm).
const (
	// CommScatter cuts a shard out of a whole value on the host.
	CommScatter = "scatter"
	// CommGather joins the shards of a value into the whole on the host.
	CommGather = "gather"
	// CommAllReduce sums the partial results of a node run on shards of
	// its reduced axis into the whole on the host.
	CommAllReduce = "all-reduce"
)

// Comm describes a node that the planner inserted to move a sharded value
// between its layouts; it runs on the host, and the transfers that bring
// its inputs there and its output to its consumers are the plan's
// transfer steps.
type Comm struct {
	// Kind is CommScatter, CommGather or CommAllReduce.
	Kind string
	// Value is the model's value that the node moves.
	Value string
	// Devices are the logical devices whose shards the node joins (gather,
	// all-reduce) or cuts for (scatter), in ascending order.
	Devices []int
}

// Shard describes a node that the planner made by running a node of the
// model on one shard of its inputs.
type Shard struct {
	// Of names the model's node.
	Of string `json:"of"`
	// Index and Count place the shard among the node's runs.
	Index int `json:"index"`
	Count int `json:"count"`
	// Box is the part of the node's output that the run computes, as
	// "[lo:hi,...]"; Partial marks a run over a part of the reduced axis,
	// whose result is summed with the others'.
	Box     string `json:"box"`
	Partial bool   `json:"partial,omitempty"`
}

// piece is one part of a value under tensor sharding: the box [lo, hi) of
// the whole tensor, on logical device dev, held as value name ("" while it
// is not materialized yet).
type piece struct {
	lo, hi []int64
	dev    int
	name   string
}

// sharded is the state of one value that sharding specs split or
// replicate.
type sharded struct {
	// layout is the value's sharding: what consumers without a spec of
	// their own take.
	layout []piece
	// base are materialized pieces that tile the whole value, nil when
	// the whole value exists under its own name.
	base []piece
}

// sharder applies the sharding specs of one device configuration to a
// graph: it replaces each node that works on sharded values by one node
// per shard, pinned to the shard's logical device, and inserts the
// scatter, gather and all-reduce nodes (run on the host) that its inputs
// and consumers need.
type sharder struct {
	p      *Plan
	g      *graph.Graph
	config string
	num    int
	inputs map[string]bool
	values map[string]*sharded
	// slices caches the value holding a box of a value, by sliceKey.
	slices map[string]string
	out    []*graph.Node
	notes  []string
}

// shardTensors applies the sharding specs of st's configuration to the
// plan's graph (see sharder). It records the nodes it made in p.Comms and
// p.Shards and the specs it could not apply in p.Notes; a spec that
// contradicts its tensor (an axis out of range, more shards than the axis
// has elements, a device list that does not match the shard count) is an
// error naming the node and the field.
func (p *Plan) shardTensors(st *Stages) error {
	g := p.Graph
	s := &sharder{p: p, g: g, config: st.Configuration, num: len(st.Devices), inputs: graphInputs(g), values: map[string]*sharded{}, slices: map[string]string{}}
	annotated := false
	for _, n := range g.Nodes {
		if dc, ok := annotation(n, s.config); ok && len(dc.Sharding) > 0 {
			annotated = true
		}
	}
	if !annotated {
		return nil
	}
	p.Comms, p.Shards = map[string]Comm{}, map[string]Shard{}
	for _, n := range g.Nodes {
		if err := s.node(n); err != nil {
			return fmt.Errorf("planner: model %q: %s: %w", p.Model.Name, n, err)
		}
	}
	for _, o := range g.Outputs {
		if err := s.ensureWhole(o.Name); err != nil {
			return fmt.Errorf("planner: model %q: graph output %q: %w", p.Model.Name, o.Name, err)
		}
	}
	nodes, err := s.groupRuns()
	if err != nil {
		return fmt.Errorf("planner: model %q: %w", p.Model.Name, err)
	}
	g.Nodes = nodes
	p.Notes = append(p.Notes, s.notes...)
	return nil
}

// groupRuns orders the rewritten nodes so that each logical device's runs
// follow one another where the dependencies allow: among the nodes whose
// inputs are ready it takes the first on the device of the node before,
// else the first. A device's consecutive nodes form one segment of the
// executor (one submit on a GPU). It fails if the nodes do not form a
// graph in which every value has one producer and there is no cycle.
func (s *sharder) groupRuns() ([]*graph.Node, error) {
	pin := func(n *graph.Node) int {
		if _, ok := s.p.comm(n); ok {
			return -1
		}
		if s.p.Shards[n.Name].Count > 0 {
			return int(n.DeviceConfigs[0].PipelineStage)
		}
		return -2
	}
	producer := map[string]int{}
	for i, n := range s.out {
		for _, o := range n.Outputs {
			if _, dup := producer[o]; dup && o != "" {
				return nil, fmt.Errorf("applying the sharding specs made two producers of %q", o)
			}
			if o != "" {
				producer[o] = i
			}
		}
	}
	waiting := make([]int, len(s.out))
	users := make([][]int, len(s.out))
	for i, n := range s.out {
		for _, in := range append(slices.Clone(n.Inputs), graph.Captured(n)...) {
			if j, ok := producer[in]; ok && in != "" && j != i {
				waiting[i]++
				users[j] = append(users[j], i)
			}
		}
	}
	var ready []int
	for i := range s.out {
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}
	order := make([]*graph.Node, 0, len(s.out))
	last := -3
	for len(ready) > 0 {
		slices.Sort(ready)
		k := slices.IndexFunc(ready, func(i int) bool { return pin(s.out[i]) == last })
		if k < 0 {
			k = 0
		}
		i := ready[k]
		ready = slices.Delete(ready, k, k+1)
		order = append(order, s.out[i])
		last = pin(s.out[i])
		for _, u := range users[i] {
			if waiting[u]--; waiting[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(order) != len(s.out) {
		return nil, fmt.Errorf("applying the sharding specs made a cycle")
	}
	return order, nil
}

// node rewrites n: one node per shard when a rule for its op applies to
// its inputs' and outputs' layouts, else n itself on whole inputs.
func (s *sharder) node(n *graph.Node) error {
	var dc graph.NodeDeviceConfiguration
	at := slices.IndexFunc(n.DeviceConfigs, func(c graph.NodeDeviceConfiguration) bool { return c.ConfigurationID == s.config })
	if at >= 0 {
		dc = n.DeviceConfigs[at]
	}
	want := make([][]piece, len(n.Inputs))
	outWant := make([][]piece, len(n.Outputs))
	apply := false
	for k, spec := range dc.Sharding {
		l, err := s.specLayout(spec)
		if errors.Is(err, errUnapplied) {
			s.note(n, fmt.Sprintf("device_configurations[%d].sharding_spec[%d].%v", at, k, err))
			continue
		}
		if err != nil {
			return fmt.Errorf("device_configurations[%d].sharding_spec[%d].%w", at, k, err)
		}
		if l == nil {
			s.note(n, fmt.Sprintf("the shape of %q is not known", spec.TensorName))
			continue
		}
		for i, in := range n.Inputs {
			if in == spec.TensorName {
				want[i], apply = l, true
			}
		}
		for i, out := range n.Outputs {
			if out == spec.TensorName {
				outWant[i], apply = l, true
			}
		}
	}
	for i, in := range n.Inputs {
		if v := s.values[in]; in != "" && want[i] == nil && v != nil {
			want[i], apply = v.layout, true
		}
	}
	if !apply {
		return s.whole(n, outWant)
	}
	var done bool
	var err error
	switch {
	case len(graph.Captured(n)) > 0:
	case elementwise(n):
		done, err = s.elementwise(n, want, outWant[0])
	case n.Domain == graph.DefaultDomain && (n.OpType == "MatMul" || n.OpType == "Gemm"):
		done, err = s.matmul(n, want, outWant[0])
	case n.Domain == graph.DefaultDomain && (n.OpType == "Transpose" || n.OpType == "Reshape") && want[0] != nil:
		done, err = s.moveAxes(n, want[0], outWant[0])
	case want[0] != nil && len(n.Outputs) == 1:
		done, err = s.alongAxes(n, want[0], outWant[0])
	}
	if err != nil || done {
		return err
	}
	if len(dc.Sharding) > 0 {
		s.note(n, fmt.Sprintf("%s runs once, on whole inputs", n.OpType))
	}
	return s.whole(n, outWant)
}

// note records that n's sharding is not applied, and why.
func (s *sharder) note(n *graph.Node, why string) {
	s.notes = append(s.notes, fmt.Sprintf("%s: sharding not applied: %s", n, why))
}

// whole emits n unchanged on whole inputs, gathering those that are
// sharded, and gives its outputs the layouts outWant asks for.
func (s *sharder) whole(n *graph.Node, outWant [][]piece) error {
	for _, in := range append(slices.Clone(n.Inputs), graph.Captured(n)...) {
		if err := s.ensureWhole(in); err != nil {
			return fmt.Errorf("input %q: %w", in, err)
		}
	}
	s.out = append(s.out, n)
	for i, l := range outWant {
		if l != nil && n.Outputs[i] != "" {
			s.values[n.Outputs[i]] = &sharded{layout: l}
		}
	}
	return nil
}

// specLayout returns the pieces (not yet materialized) that spec asks for,
// or nil when its tensor's shape is not known.
func (s *sharder) specLayout(spec graph.ShardingSpec) ([]piece, error) {
	t := s.g.TypeOf(spec.TensorName)
	if t == nil || t.Kind != graph.TensorKind {
		return nil, nil
	}
	rank := len(t.Shape)
	devs := func(d int64) []int {
		if members, ok := spec.DeviceGroups[d]; ok {
			out := make([]int, len(members))
			for j, m := range members {
				out[j] = int(m)
			}
			return out
		}
		return []int{int(d)}
	}
	shards := int64(1)
	axes := make([]int, len(spec.ShardedDims))
	counts := make([]int64, len(spec.ShardedDims))
	for j, sd := range spec.ShardedDims {
		if sd.Axis < -int64(rank) || sd.Axis >= int64(rank) {
			return nil, fmt.Errorf("sharded_dim[%d].axis %d: %w: tensor %q has rank %d", j, sd.Axis, ErrBadDeviceConfiguration, spec.TensorName, rank)
		}
		axes[j] = int((sd.Axis + int64(rank)) % int64(rank))
		if slices.Contains(axes[:j], axes[j]) {
			return nil, fmt.Errorf("sharded_dim[%d].axis %d: %w: the axis is sharded twice", j, sd.Axis, ErrBadDeviceConfiguration)
		}
		dim := int64(-1)
		if d := t.Shape[axes[j]]; d.Known() {
			dim = d.Value
		}
		count, err := fusedShards(sd, dim)
		if err != nil {
			return nil, fmt.Errorf("sharded_dim[%d]: %w", j, err)
		}
		if dim >= 0 && count > dim {
			return nil, fmt.Errorf("sharded_dim[%d]: %w: %d shards of axis %d, which has %d elements in tensor %q",
				j, ErrBadDeviceConfiguration, count, axes[j], dim, spec.TensorName)
		}
		counts[j] = count
		shards *= count
	}
	if len(spec.ShardedDims) > 0 && int64(len(spec.Devices)) != shards {
		return nil, fmt.Errorf("device: %w: %d entries for %d shards (the product of the sharded axes' num_shards)",
			ErrBadDeviceConfiguration, len(spec.Devices), shards)
	}
	if len(spec.Devices) == 0 {
		return nil, fmt.Errorf("device: %w: no devices", ErrBadDeviceConfiguration)
	}
	if !t.Shape.Known() {
		return nil, nil
	}
	dims := t.Shape.Ints()
	var out []piece
	for k, d := range spec.Devices {
		lo, hi := make([]int64, rank), slices.Clone(dims)
		idx := k
		for j := len(axes) - 1; j >= 0; j-- {
			i := int64(idx) % counts[j]
			idx /= int(counts[j])
			lo[axes[j]], hi[axes[j]] = splitRange(dims[axes[j]], counts[j], i)
		}
		for _, dev := range devs(d) {
			out = append(out, piece{lo: lo, hi: hi, dev: dev})
		}
	}
	return distinct(out), nil
}

// errUnapplied is wrapped by specLayout's errors about specs that are
// valid but that the planner cannot apply; such a spec is noted and left.
var errUnapplied = errors.New("not applied")

// fusedShards returns the number of contiguous shards a sharded axis of
// size dim (-1 when unknown) splits into. Several simple shardings describe
// factors of the axis (axes fused by a reshape, first outermost): each
// factor's num_shards must divide its dim_value, and the shards are
// contiguous ranges of the axis only when no factor after the first split
// one is split too.
func fusedShards(sd graph.ShardedDim, dim int64) (int64, error) {
	if len(sd.SimpleSharding) == 0 {
		return 0, fmt.Errorf("simple_sharding: %w: empty", ErrBadDeviceConfiguration)
	}
	count, product := int64(1), int64(1)
	for k, ss := range sd.SimpleSharding {
		if ss.NumShards < 1 {
			return 0, fmt.Errorf("simple_sharding[%d].num_shards %d: %w: want at least 1", k, ss.NumShards, ErrBadDeviceConfiguration)
		}
		if len(sd.SimpleSharding) > 1 {
			if !ss.Dim.Known() {
				return 0, fmt.Errorf("simple_sharding[%d]: %w: a factor of fused axes without a dim_value", k, errUnapplied)
			}
			if ss.Dim.Value%ss.NumShards != 0 {
				return 0, fmt.Errorf("simple_sharding[%d].num_shards %d: %w: does not divide the factor's dim_value %d",
					k, ss.NumShards, ErrBadDeviceConfiguration, ss.Dim.Value)
			}
			product *= ss.Dim.Value
		}
		if count > 1 && ss.NumShards > 1 {
			return 0, fmt.Errorf("simple_sharding[%d].num_shards %d: %w: an inner factor of fused axes split after an outer one gives shards that are not contiguous",
				k, ss.NumShards, errUnapplied)
		}
		count *= ss.NumShards
	}
	if len(sd.SimpleSharding) > 1 && dim >= 0 && product != dim {
		return 0, fmt.Errorf("simple_sharding: %w: the factors' dim_values multiply to %d, the axis has %d elements", ErrBadDeviceConfiguration, product, dim)
	}
	return count, nil
}

// splitRange returns shard i of n shards of an axis of size d: the first
// d%n shards have one element more than the others.
func splitRange(d, n, i int64) (lo, hi int64) {
	base, rem := d/n, d%n
	lo = i*base + min(i, rem)
	hi = lo + base
	if i < rem {
		hi++
	}
	return lo, hi
}

// elementwise runs an elementwise node once per piece of the driving
// layout: outWant when given, else the first sharded input's layout
// broadcast to the output's shape.
func (s *sharder) elementwise(n *graph.Node, want [][]piece, outWant []piece) (bool, error) {
	y := n.Outputs[0]
	outDims, ok := s.dims(y)
	if !ok {
		return false, nil
	}
	inDims := make([][]int64, len(n.Inputs))
	for i, in := range n.Inputs {
		if in == "" {
			continue
		}
		if inDims[i], ok = s.dims(in); !ok {
			return false, nil
		}
	}
	drive := outWant
	for i := 0; drive == nil && i < len(want); i++ {
		for _, pc := range want[i] {
			lo, hi := fullBox(outDims)
			off := len(outDims) - len(inDims[i])
			for a := range inDims[i] {
				if inDims[i][a] == outDims[a+off] {
					lo[a+off], hi[a+off] = pc.lo[a], pc.hi[a]
				}
			}
			drive = append(drive, piece{lo: lo, hi: hi, dev: pc.dev})
		}
	}
	drive = distinct(drive)
	made := make([]piece, len(drive))
	for j, pc := range drive {
		ins := make([]string, len(n.Inputs))
		for i, in := range n.Inputs {
			if in == "" {
				continue
			}
			lo, hi := broadcastBox(pc.lo, pc.hi, inDims[i])
			name, err := s.need(in, lo, hi, pc.dev)
			if err != nil {
				return false, fmt.Errorf("input %q: %w", in, err)
			}
			ins[i] = name
		}
		made[j] = s.replica(n, ins, pc, j, len(drive), false)
	}
	s.setLayout(y, made, outWant)
	return true, nil
}

// matmul runs a MatMul or Gemm once per piece of its A input's layout
// (rows, batches or the reduced axis), or else of its B input's (columns
// or the reduced axis). Runs over parts of the reduced axis make partial
// products that an all-reduce sums on the host.
func (s *sharder) matmul(n *graph.Node, want [][]piece, outWant []piece) (bool, error) {
	f, ok := s.matmulForm(n)
	if !ok {
		return false, nil
	}
	y := n.Outputs[0]
	aDrives := want[0] != nil && (len(splitAxes(want[0], f.aDims)) > 0 || want[1] == nil)
	type run struct {
		out    piece
		kl, kh int64
	}
	var runs []run
	switch {
	case want[0] == nil && want[1] == nil:
		for _, pc := range outWant {
			runs = append(runs, run{pc, 0, f.aDims[f.aK]})
		}
	case aDrives:
		for _, pc := range want[0] {
			runs = append(runs, run{f.outBox(pc, f.aDims, f.aM, f.r-2), pc.lo[f.aK], pc.hi[f.aK]})
		}
	default:
		for _, pc := range want[1] {
			runs = append(runs, run{f.outBox(pc, f.bDims, f.bN, f.r-1), pc.lo[f.bK], pc.hi[f.bK]})
		}
	}
	k := f.aDims[f.aK]
	partial := false
	for _, r := range runs {
		if r.kl != 0 || r.kh != k {
			partial = true
		}
	}
	if partial {
		for _, r := range runs {
			if lo, hi := fullBox(f.outDims); !slices.Equal(r.out.lo, lo) || !slices.Equal(r.out.hi, hi) {
				return false, nil
			}
		}
		if n.OpType == "Gemm" && len(n.Inputs) > 2 && n.Inputs[2] != "" && s.p.Model.OpsetOf(n) < 11 {
			return false, nil
		}
		seen := map[[2]int64]bool{}
		kept := runs[:0]
		for _, r := range runs {
			if !seen[[2]int64{r.kl, r.kh}] {
				seen[[2]int64{r.kl, r.kh}] = true
				kept = append(kept, r)
			}
		}
		runs = kept
	} else {
		outs := make([]piece, len(runs))
		for j, r := range runs {
			outs[j] = r.out
		}
		if len(distinct(outs)) != len(outs) {
			return false, nil
		}
	}
	made := make([]piece, len(runs))
	for j, r := range runs {
		ins := slices.Clone(n.Inputs)
		alo, ahi := f.inputBox(r.out, r.kl, r.kh, f.aDims, f.ra, f.aM, f.aK, -1)
		blo, bhi := f.inputBox(r.out, r.kl, r.kh, f.bDims, f.rb, -1, f.bK, f.bN)
		var err error
		if ins[0], err = s.need(n.Inputs[0], alo, ahi, r.out.dev); err != nil {
			return false, fmt.Errorf("input %q: %w", n.Inputs[0], err)
		}
		if ins[1], err = s.need(n.Inputs[1], blo, bhi, r.out.dev); err != nil {
			return false, fmt.Errorf("input %q: %w", n.Inputs[1], err)
		}
		if len(ins) > 2 && ins[2] != "" {
			if partial && j > 0 {
				ins = ins[:2]
			} else {
				cDims, _ := s.dims(n.Inputs[2])
				clo, chi := broadcastBox(r.out.lo, r.out.hi, cDims)
				if ins[2], err = s.need(n.Inputs[2], clo, chi, r.out.dev); err != nil {
					return false, fmt.Errorf("input %q: %w", n.Inputs[2], err)
				}
			}
		}
		made[j] = s.replica(n, ins, r.out, j, len(runs), partial)
	}
	if partial {
		s.allReduce(y, made, "Sum", outWant)
		return true, nil
	}
	s.setLayout(y, made, outWant)
	return true, nil
}

// setLayout records the pieces that the runs of y's node made, and y's
// layout: outWant when its node's spec gives one, else those pieces. A
// single whole piece is y itself.
func (s *sharder) setLayout(y string, made, outWant []piece) {
	st := &sharded{layout: made, base: made}
	if len(made) == 1 && made[0].name == y {
		st.base = nil
	}
	if outWant != nil {
		st.layout = outWant
	}
	s.values[y] = st
}

// moveAxes runs a Transpose or a Reshape once per piece of its input's
// layout when every split axis survives as one output axis: Transpose
// permutes the pieces' boxes; Reshape keeps a split axis whose size and
// whose product of the sizes before it are those of an output axis (the
// others may merge or split around it), each run reshaping its piece to
// its own shape, given as a constant.
func (s *sharder) moveAxes(n *graph.Node, layout, outWant []piece) (bool, error) {
	inDims, ok1 := s.dims(n.Inputs[0])
	outDims, ok2 := s.dims(n.Outputs[0])
	if !ok1 || !ok2 {
		return false, nil
	}
	split := splitAxes(layout, inDims)
	to := make(map[int]int, len(split))
	if n.OpType == "Transpose" {
		perm := ops.Params[ops.TransposeParams](n, s.p.Model.OpsetOf(n)).Perm
		for o := range outDims {
			a := len(outDims) - 1 - o
			if perm != nil {
				a = int(perm[o])
			}
			if slices.Contains(split, a) {
				to[a] = o
			}
		}
	} else {
		for _, a := range split {
			before := graph.NumElements(inDims[:a])
			for o := range outDims {
				if graph.NumElements(outDims[:o]) == before && outDims[o] == inDims[a] {
					to[a] = o
					break
				}
			}
		}
	}
	if len(to) != len(split) || n.OpType == "Reshape" && len(n.Inputs) < 2 {
		return false, nil
	}
	layout = distinct(layout)
	made := make([]piece, len(layout))
	for j, pc := range layout {
		lo, hi := fullBox(outDims)
		for a, o := range to {
			lo[o], hi[o] = pc.lo[a], pc.hi[a]
		}
		ins := slices.Clone(n.Inputs)
		var err error
		if ins[0], err = s.need(n.Inputs[0], pc.lo, pc.hi, pc.dev); err != nil {
			return false, fmt.Errorf("input %q: %w", n.Inputs[0], err)
		}
		if n.OpType == "Reshape" {
			shape := fmt.Sprintf("%s@shape%s", n.Outputs[0], boxString(lo, hi))
			t, _ := graph.FromSlice(graph.Int64, []int64{int64(len(outDims))}, boxDims(lo, hi))
			s.g.Initializers[shape], ins[1] = t, shape
		}
		made[j] = s.replica(n, ins, piece{lo: lo, hi: hi, dev: pc.dev}, j, len(layout), false)
	}
	s.setLayout(n.Outputs[0], made, outWant)
	return true, nil
}

// combineOps are the ops that combine partial results of a reduction
// run on shards of a reduced axis, by the reduction.
var combineOps = map[string]string{"ReduceSum": "Sum", "ReduceMax": "Max", "ReduceMin": "Min", "ReduceL1": "Sum", "ReduceSumSquare": "Sum"}

// axesOf returns the axes of input 0 (of rank rank) along which n
// computes, whether n removes or keeps them (reduce) and whether it
// drops them from its output (dropped), or ok false when n is not such an
// op or its axes are not known at plan time.
func (s *sharder) axesOf(n *graph.Node, rank int) (axes []int, reduce, dropped, ok bool) {
	if n.Domain != graph.DefaultDomain {
		return nil, false, false, false
	}
	norm := func(a int64) int { return int((a%int64(rank) + int64(rank)) % int64(rank)) }
	tail := func(a int64) []int {
		var out []int
		for i := norm(a); i < rank; i++ {
			out = append(out, i)
		}
		return out
	}
	opset := s.p.Model.OpsetOf(n)
	switch op := n.OpType; {
	case op == "Softmax" || op == "LogSoftmax" || op == "Hardmax":
		if opset < 13 {
			return tail(ops.AxisParamOf(n, opset).Axis), false, false, true
		}
		return []int{norm(ops.AxisParamOf(n, opset).Axis)}, false, false, true
	case op == "LayerNormalization":
		return tail(ops.NormalizationOf(n, opset).Axis), false, false, true
	case op == "ArgMax" || op == "ArgMin":
		p := ops.ArgReduceOf(n, opset)
		return []int{norm(p.Axis)}, true, p.Keepdims == 0, true
	case strings.HasPrefix(op, "Reduce"):
		var list []int64
		if n.Input(1) != "" {
			t := s.g.Initializers[n.Input(1)]
			if t == nil || s.inputs[n.Input(1)] {
				return nil, false, false, false
			}
			var err error
			if list, err = t.Int64s(); err != nil {
				return nil, false, false, false
			}
		}
		if len(list) == 0 {
			if ops.ReductionOf(n, opset).NoopWithEmptyAxes != 0 {
				return nil, false, false, false
			}
			for a := range rank {
				axes = append(axes, a)
			}
		}
		for _, a := range list {
			axes = append(axes, norm(a))
		}
		return axes, true, ops.ReductionOf(n, opset).Keepdims == 0, true
	}
	return nil, false, false, false
}

// alongAxes runs an op that works along some axes of its input 0
// (Softmax, LayerNormalization, reductions, ArgMax) once per piece of
// that input's layout. Pieces that span those axes make pieces of the
// output; a reduction whose every split axis is reduced makes partial
// results that an all-reduce combines. The op's other inputs are taken
// whole.
func (s *sharder) alongAxes(n *graph.Node, layout, outWant []piece) (bool, error) {
	inDims, ok1 := s.dims(n.Inputs[0])
	outDims, ok2 := s.dims(n.Outputs[0])
	if !ok1 || !ok2 {
		return false, nil
	}
	axes, reduce, dropped, ok := s.axesOf(n, len(inDims))
	if !ok {
		return false, nil
	}
	split := splitAxes(layout, inDims)
	across := 0
	for _, a := range split {
		if slices.Contains(axes, a) {
			across++
		}
	}
	partial := across > 0
	combine := combineOps[n.OpType]
	if partial && (across != len(split) || combine == "") {
		return false, nil
	}
	var runs []piece
	for _, pc := range layout {
		lo, hi := fullBox(outDims)
		o := 0
		for a := range inDims {
			switch {
			case !slices.Contains(axes, a) || !reduce:
				lo[o], hi[o] = pc.lo[a], pc.hi[a]
				o++
			case !dropped:
				o++
			}
		}
		runs = append(runs, piece{lo: lo, hi: hi, dev: pc.dev, name: ""})
	}
	in := layout
	if partial {
		var keptIn, keptRuns []piece
		for _, pc := range distinctBoxes(layout) {
			keptIn = append(keptIn, pc)
			keptRuns = append(keptRuns, piece{lo: runs[0].lo, hi: runs[0].hi, dev: pc.dev})
		}
		in, runs = keptIn, keptRuns
	} else if len(distinct(runs)) != len(runs) {
		return false, nil
	}
	made := make([]piece, len(runs))
	for j, r := range runs {
		ins := slices.Clone(n.Inputs)
		var err error
		if ins[0], err = s.need(n.Inputs[0], in[j].lo, in[j].hi, r.dev); err != nil {
			return false, fmt.Errorf("input %q: %w", n.Inputs[0], err)
		}
		for i := 1; i < len(ins); i++ {
			if ins[i] == "" {
				continue
			}
			d, ok := s.dims(ins[i])
			if !ok {
				return false, fmt.Errorf("the shape of %q is not known", ins[i])
			}
			lo, hi := fullBox(d)
			if ins[i], err = s.need(n.Inputs[i], lo, hi, r.dev); err != nil {
				return false, fmt.Errorf("input %q: %w", n.Inputs[i], err)
			}
		}
		made[j] = s.replica(n, ins, r, j, len(runs), partial)
	}
	y := n.Outputs[0]
	if partial {
		s.allReduce(y, made, combine, outWant)
		return true, nil
	}
	s.setLayout(y, made, outWant)
	return true, nil
}

// allReduce emits the node that combines partial results made into y on
// the host (op Sum, Max or Min), and gives y the layout outWant.
func (s *sharder) allReduce(y string, made []piece, op string, outWant []piece) {
	names := make([]string, len(made))
	for j, pc := range made {
		names[j] = pc.name
	}
	s.emitComm(&graph.Node{Name: "all-reduce " + y, OpType: op, Inputs: names, Outputs: []string{y}}, CommAllReduce, y, made)
	if outWant != nil {
		s.values[y] = &sharded{layout: outWant}
	}
}

// mmForm is the layout of a MatMul's or Gemm's operands: their shapes
// and ranks, the output's, and the axes of A's rows (aM) and reduced axis
// (aK) and of B's reduced axis (bK) and columns (bN).
type mmForm struct {
	aDims, bDims, outDims []int64
	ra, rb, r             int
	aM, aK, bK, bN        int
}

// matmulForm describes n's operands, or reports false when a shape is not
// known or an operand is a vector.
func (s *sharder) matmulForm(n *graph.Node) (mmForm, bool) {
	var f mmForm
	var ok1, ok2, ok3 bool
	f.aDims, ok1 = s.dims(n.Inputs[0])
	f.bDims, ok2 = s.dims(n.Inputs[1])
	f.outDims, ok3 = s.dims(n.Outputs[0])
	if !ok1 || !ok2 || !ok3 || len(f.aDims) < 2 || len(f.bDims) < 2 {
		return f, false
	}
	f.ra, f.rb, f.r = len(f.aDims), len(f.bDims), len(f.outDims)
	f.aM, f.aK, f.bK, f.bN = f.ra-2, f.ra-1, f.rb-2, f.rb-1
	if n.OpType == "Gemm" {
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			if _, ok := s.dims(n.Inputs[2]); !ok {
				return f, false
			}
		}
		p := ops.Params[ops.GemmParams](n, s.p.Model.OpsetOf(n))
		if p.TransA != 0 {
			f.aM, f.aK = 1, 0
		}
		if p.TransB != 0 {
			f.bK, f.bN = 1, 0
		}
	}
	return f, true
}

// outBox returns the part of the output that piece pc of an operand of
// shape dims computes over the whole reduced axis: the piece's batch axes
// where the operand does not broadcast them, and its axis ax (rows of A,
// columns of B) at output axis o; the rest whole.
func (f mmForm) outBox(pc piece, dims []int64, ax, o int) piece {
	lo, hi := fullBox(f.outDims)
	for a := 0; a < len(dims)-2; a++ {
		if b := a + f.r - len(dims); dims[a] == f.outDims[b] {
			lo[b], hi[b] = pc.lo[a], pc.hi[a]
		}
	}
	lo[o], hi[o] = pc.lo[ax], pc.hi[ax]
	return piece{lo: lo, hi: hi, dev: pc.dev}
}

// inputBox returns the box of an operand (shape dims, rank rank) that the
// output box out over the reduced range [kl, kh) needs: batch axes follow
// the output's where not broadcast, the row axis m (A's, or -1) and
// column axis nAxis (B's, or -1) the output's last two axes, and axis k
// the reduced range.
func (f mmForm) inputBox(out piece, kl, kh int64, dims []int64, rank, m, k, nAxis int) (lo, hi []int64) {
	lo, hi = fullBox(dims)
	for a := 0; a < rank-2; a++ {
		if o := a + f.r - rank; dims[a] != 1 {
			lo[a], hi[a] = out.lo[o], out.hi[o]
		}
	}
	if m >= 0 {
		lo[m], hi[m] = out.lo[f.r-2], out.hi[f.r-2]
	}
	if nAxis >= 0 {
		lo[nAxis], hi[nAxis] = out.lo[f.r-1], out.hi[f.r-1]
	}
	lo[k], hi[k] = kl, kh
	return lo, hi
}

// replica emits a copy of n that reads ins and computes box pc of its
// output on pc's device, and returns pc with the name of that output.
func (s *sharder) replica(n *graph.Node, ins []string, pc piece, j, count int, partial bool) piece {
	y := n.Outputs[0]
	box := boxString(pc.lo, pc.hi)
	label := nodeLabel(n)
	pc.name = fmt.Sprintf("%s@d%d%s", y, pc.dev, box)
	name := fmt.Sprintf("%s@d%d%s", label, pc.dev, box)
	dims, _ := s.dims(y)
	switch {
	case partial:
		pc.name = fmt.Sprintf("%s@d%d/partial%d", y, pc.dev, j)
		name = fmt.Sprintf("%s@d%d/partial%d", label, pc.dev, j)
	case count == 1 && slices.Equal(boxDims(pc.lo, pc.hi), dims):
		pc.name = y
	}
	r := &graph.Node{Name: name, OpType: n.OpType, Domain: n.Domain, Overload: n.Overload, Inputs: ins, Outputs: []string{pc.name},
		Attrs: n.Attrs, Doc: n.Doc, Metadata: n.Metadata, Index: n.Index,
		DeviceConfigs: []graph.NodeDeviceConfiguration{{ConfigurationID: s.config, PipelineStage: int32(pc.dev), HasStage: true}}}
	if pc.name != y {
		s.setType(pc.name, y, boxDims(pc.lo, pc.hi))
	}
	s.p.Shards[name] = Shard{Of: label, Index: j, Count: count, Box: box, Partial: partial}
	s.out = append(s.out, r)
	return pc
}

// need returns a value that holds box [lo, hi) of value v, for device
// dev: v itself when the box is whole and v exists, an existing piece
// with that box (on dev if there is one), a slice of a constant made at
// plan time, else a slice of the gathered whole cut on the host.
func (s *sharder) need(v string, lo, hi []int64, dev int) (string, error) {
	st := s.values[v]
	dims, ok := s.dims(v)
	if !ok {
		return "", fmt.Errorf("the shape of %q is not known", v)
	}
	flo, fhi := fullBox(dims)
	whole := slices.Equal(lo, flo) && slices.Equal(hi, fhi)
	if st != nil {
		found := ""
		for _, l := range [][]piece{st.base, st.layout} {
			for _, pc := range l {
				if pc.name != "" && slices.Equal(pc.lo, lo) && slices.Equal(pc.hi, hi) && (found == "" || pc.dev == dev) {
					found = pc.name
				}
			}
		}
		if found != "" {
			return found, nil
		}
	}
	if whole && (st == nil || st.base == nil) {
		return v, nil
	}
	key := v + boxString(lo, hi)
	if name, ok := s.slices[key]; ok {
		if c, ok := s.p.Comms["scatter "+key]; ok && !slices.Contains(c.Devices, dev) {
			c.Devices = append(c.Devices, dev)
			slices.Sort(c.Devices)
			s.p.Comms["scatter "+key] = c
		}
		return name, nil
	}
	if t := s.g.Initializers[v]; t != nil && !s.inputs[v] && st == nil && t.DType != graph.String && t.DType.Bits()%8 == 0 {
		s.g.Initializers[key] = sliceTensor(t, lo, hi)
		s.slices[key] = key
		return key, nil
	}
	if err := s.ensureWhole(v); err != nil {
		return "", err
	}
	if whole {
		return v, nil
	}
	s.slices[key] = key
	s.emitComm(s.sliceNode(v, key, lo, hi), CommScatter, v, []piece{{dev: dev}})
	s.setType(key, v, boxDims(lo, hi))
	return key, nil
}

// ensureWhole makes value v exist under its own name: when only its
// shards exist, it gathers them on the host.
func (s *sharder) ensureWhole(v string) error {
	st := s.values[v]
	if v == "" || st == nil || st.base == nil {
		return nil
	}
	dims, _ := s.dims(v)
	pieces := distinctBoxes(st.base)
	axes := splitAxes(pieces, dims)
	if err := checkTiling(pieces, dims, axes); err != nil {
		return fmt.Errorf("gathering %q: %w", v, err)
	}
	s.gather(v, pieces, axes, v)
	st.base = nil
	return nil
}

// gather emits the Concat nodes that join pieces, which tile a box, along
// axes (outermost first), and returns the joined value's name: final when
// given, else a new one.
func (s *sharder) gather(v string, pieces []piece, axes []int, final string) string {
	if len(axes) == 0 {
		if final == "" {
			return pieces[0].name
		}
		s.emitComm(&graph.Node{Name: "gather " + final, OpType: "Identity", Inputs: []string{pieces[0].name}, Outputs: []string{final}}, CommGather, v, pieces)
		return final
	}
	a := axes[0]
	groups := map[int64][]piece{}
	for _, pc := range pieces {
		groups[pc.lo[a]] = append(groups[pc.lo[a]], pc)
	}
	starts := slices.Sorted(maps.Keys(groups))
	if len(starts) == 1 {
		return s.gather(v, pieces, axes[1:], final)
	}
	names := make([]string, len(starts))
	lo, hi := slices.Clone(pieces[0].lo), slices.Clone(pieces[0].hi)
	for i, start := range starts {
		names[i] = s.gather(v, groups[start], axes[1:], "")
		for _, pc := range groups[start] {
			for d := range lo {
				lo[d], hi[d] = min(lo[d], pc.lo[d]), max(hi[d], pc.hi[d])
			}
		}
	}
	out := final
	if out == "" {
		out = v + "@host" + boxString(lo, hi)
		s.setType(out, v, boxDims(lo, hi))
	}
	s.emitComm(&graph.Node{Name: "gather " + out, OpType: "Concat", Inputs: names, Outputs: []string{out},
		Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: int64(a)}}}, CommGather, v, pieces)
	return out
}

// sliceNode returns a Slice node, in its canonical form (see
// ops.Canonicalize), that cuts box [lo, hi) of v into out.
func (s *sharder) sliceNode(v, out string, lo, hi []int64) *graph.Node {
	dims, _ := s.dims(v)
	var axes, starts, ends []int64
	for a := range dims {
		if lo[a] != 0 || hi[a] != dims[a] {
			axes, starts, ends = append(axes, int64(a)), append(starts, lo[a]), append(ends, hi[a])
		}
	}
	n := &graph.Node{Name: "scatter " + out, OpType: "Slice", Outputs: []string{out}, Opset: ops.Newest("Slice")}
	n.Inputs = []string{v, out + "/starts", out + "/ends", out + "/axes"}
	for i, vals := range [][]int64{starts, ends, axes} {
		t, _ := graph.FromSlice(graph.Int64, []int64{int64(len(vals))}, vals)
		s.g.Initializers[n.Inputs[i+1]] = t
	}
	return n
}

// emitComm appends communication node n, which moves value v between
// its host copy and the pieces' devices.
func (s *sharder) emitComm(n *graph.Node, kind, v string, pieces []piece) {
	n.Index = -1
	var devs []int
	for _, pc := range pieces {
		devs = append(devs, pc.dev)
	}
	slices.Sort(devs)
	s.p.Comms[n.Name] = Comm{Kind: kind, Value: v, Devices: slices.Compact(devs)}
	s.out = append(s.out, n)
}

// dims returns the known shape of value v.
func (s *sharder) dims(v string) ([]int64, bool) {
	t := s.g.TypeOf(v)
	if t == nil || t.Kind != graph.TensorKind || !t.Shape.Known() {
		return nil, false
	}
	return t.Shape.Ints(), true
}

// setType records that value name has the element type of value like and
// shape dims.
func (s *sharder) setType(name, like string, dims []int64) {
	s.g.ValueInfo[name] = &graph.ValueInfo{Name: name, Type: graph.TensorType(s.g.TypeOf(like).Elem, graph.ShapeOf(dims...))}
}

// sliceTensor copies box [lo, hi) of t, whose elements are whole bytes.
func sliceTensor(t *graph.Tensor, lo, hi []int64) *graph.Tensor {
	out := graph.NewTensor(t.DType, boxDims(lo, hi))
	size := int64(t.DType.Size())
	rank := len(t.Shape)
	if rank == 0 {
		copy(out.Data, t.Data)
		return out
	}
	row := (hi[rank-1] - lo[rank-1]) * size
	idx := slices.Clone(lo)
	for dst := int64(0); dst < int64(len(out.Data)); dst += row {
		src := int64(0)
		for a := range rank {
			src = src*t.Shape[a] + idx[a]
		}
		copy(out.Data[dst:dst+row], t.Data[src*size:src*size+row])
		for a := rank - 2; a >= 0; a-- {
			if idx[a]++; idx[a] < hi[a] {
				break
			}
			idx[a] = lo[a]
		}
	}
	return out
}

// fullBox returns the box of a whole tensor of shape dims.
func fullBox(dims []int64) (lo, hi []int64) {
	return make([]int64, len(dims)), slices.Clone(dims)
}

// broadcastBox returns the box of an input of shape dims that output box
// [lo, hi) reads under multidirectional broadcasting.
func broadcastBox(lo, hi, dims []int64) (blo, bhi []int64) {
	blo, bhi = fullBox(dims)
	off := len(lo) - len(dims)
	for a := range dims {
		if dims[a] != 1 {
			blo[a], bhi[a] = lo[a+off], hi[a+off]
		}
	}
	return blo, bhi
}

// boxDims returns the shape of box [lo, hi).
func boxDims(lo, hi []int64) []int64 {
	d := make([]int64, len(lo))
	for a := range lo {
		d[a] = hi[a] - lo[a]
	}
	return d
}

// boxString writes box [lo, hi) as "[lo:hi,...]".
func boxString(lo, hi []int64) string {
	parts := make([]string, len(lo))
	for a := range lo {
		parts[a] = strconv.FormatInt(lo[a], 10) + ":" + strconv.FormatInt(hi[a], 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// splitAxes returns, in order, the axes along which pieces of a tensor of
// shape dims do not span the whole axis.
func splitAxes(pieces []piece, dims []int64) []int {
	var axes []int
	for a := range dims {
		for _, pc := range pieces {
			if pc.lo[a] != 0 || pc.hi[a] != dims[a] {
				axes = append(axes, a)
				break
			}
		}
	}
	return axes
}

// distinct drops pieces with the box and device of an earlier one.
func distinct(pieces []piece) []piece { return firstOf(pieces, true) }

// distinctBoxes keeps the first piece of each box.
func distinctBoxes(pieces []piece) []piece { return firstOf(pieces, false) }

// firstOf keeps the first piece of each box, or of each box and device
// when byDevice.
func firstOf(pieces []piece, byDevice bool) []piece {
	var out []piece
	for _, pc := range pieces {
		if !slices.ContainsFunc(out, func(o piece) bool {
			return (!byDevice || o.dev == pc.dev) && slices.Equal(o.lo, pc.lo) && slices.Equal(o.hi, pc.hi)
		}) {
			out = append(out, pc)
		}
	}
	return out
}

// checkTiling verifies that pieces, one per box, form a grid that covers
// a tensor of shape dims: along each split axis their ranges tile the
// axis, and there is one piece per combination of ranges.
func checkTiling(pieces []piece, dims []int64, axes []int) error {
	want := 1
	for _, a := range axes {
		ranges := map[[2]int64]bool{}
		for _, pc := range pieces {
			ranges[[2]int64{pc.lo[a], pc.hi[a]}] = true
		}
		sorted := slices.SortedFunc(maps.Keys(ranges), func(x, y [2]int64) int { return int(x[0] - y[0]) })
		end := int64(0)
		for _, r := range sorted {
			if r[0] != end {
				return fmt.Errorf("its shards do not tile axis %d", a)
			}
			end = r[1]
		}
		if end != dims[a] {
			return fmt.Errorf("its shards do not tile axis %d", a)
		}
		want *= len(sorted)
	}
	if len(pieces) != want {
		return fmt.Errorf("its %d shards do not form a grid of %d", len(pieces), want)
	}
	return nil
}
