// Package planner turns a model into a Plan for concrete input types: the
// execution order, the device of every step, explicit transfer steps between
// devices, value lifetimes, and the offset of every intermediate value in
// one memory arena per device, with memory reused by lifetime.
package planner

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// HostDevice is the name of the CPU device, where graph inputs, outputs and
// weights live.
const HostDevice = "cpu"

// ErrUnsupported is wrapped by the error listing nodes that no device can run.
var ErrUnsupported = errors.New("no device can run these nodes")

// ErrOutOfMemory is wrapped when a plan, or a tensor a Run computes, would
// exceed Options.HostMemoryLimit; backend.ErrOutOfMemory is the same error,
// also wrapped when a device runs out of memory.
var ErrOutOfMemory = errors.New("out of memory")

// Device is what the planner asks of a device.
type Device interface {
	// Name identifies the device in plans: "cpu", "vulkan:0", ...
	Name() string
	// Supports reports whether the device can run the node q describes.
	Supports(q Query) bool
}

// Decliner is implemented by a device that can say why it does not
// support a node.
type Decliner interface {
	// Decline returns why the device cannot run the node q describes, or
	// "" when it can.
	Decline(q Query) string
}

// Decline returns "" when d supports the node q describes, else why not:
// d's own reason when it is a Decliner, else a generic one.
func Decline(d Device, q Query) string {
	if d.Supports(q) {
		return ""
	}
	if dc, ok := d.(Decliner); ok {
		if r := dc.Decline(q); r != "" {
			return r
		}
	}
	return "no kernel for these input types, attributes and shapes"
}

// Declined is a device that declined a node, and why.
type Declined struct {
	Device string `json:"device"`
	Reason string `json:"reason"`
}

// ConstantHolder is implemented by a device that reads the plan's
// constants itself when it compiles the steps that use them (a GPU that
// uploads weights once and keeps them resident). A constant needs no
// transfer step to such a device, so it neither costs a copy per Run nor
// splits the device's run of steps.
type ConstantHolder interface {
	HoldsConstants() bool
}

// Folder is implemented by a device that computes nodes at plan time (the
// CPU): New gives the first device in Options.Devices that implements it
// to shape inference as its ops.Evaluator, so that constant folding stores
// what that device's kernel computes, and folds nothing the kernel
// refuses.
type Folder interface {
	Evaluate(n *graph.Node, opset int64, inputs []*graph.Tensor) ([]*graph.Tensor, error)
}

// evaluator returns the Evaluate of the first Folder among devices, or nil.
func evaluator(devices []Device) ops.Evaluator {
	for _, d := range devices {
		if f, ok := d.(Folder); ok {
			return f.Evaluate
		}
	}
	return nil
}

// holdsConstants reports whether d keeps constants itself (see
// ConstantHolder).
func holdsConstants(d Device) bool {
	h, ok := d.(ConstantHolder)
	return ok && h.HoldsConstants()
}

// Query describes a node to Device.Supports.
type Query struct {
	Node *graph.Node
	// Opset is the version at which the model imports the node's domain.
	Opset int64
	// Inputs holds the type of each input, nil where unknown or absent.
	Inputs []*graph.Type
	// Consts holds the value of each input that is fixed at plan time (an
	// initializer that is not also a graph input, or a folded value), nil
	// elsewhere: what a kernel may read while it is compiled, such as
	// Reshape's shape or Slice's starts.
	Consts []*graph.Tensor
	// ShapeOnly marks the inputs whose values depend on the graph inputs
	// through their types only (see Plan.ShapeOnly): in a class plan,
	// fixed by the sizes each Run binds. Nil when there is none.
	ShapeOnly []bool
}

// query describes node n of g, imported at opset, for Device.Supports;
// overridable names the initializers that are also graph inputs, and
// shapeOnly the values that depend on the graph inputs' types only.
func query(g *graph.Graph, n *graph.Node, opset int64, overridable, shapeOnly map[string]bool) Query {
	q := Query{Node: n, Opset: opset, Inputs: make([]*graph.Type, len(n.Inputs)), Consts: make([]*graph.Tensor, len(n.Inputs))}
	for k, name := range n.Inputs {
		if name == "" {
			continue
		}
		q.Inputs[k] = g.TypeOf(name)
		if !overridable[name] {
			q.Consts[k] = g.Initializers[name]
		}
		if shapeOnly[name] {
			if q.ShapeOnly == nil {
				q.ShapeOnly = make([]bool, len(n.Inputs))
			}
			q.ShapeOnly[k] = true
		}
	}
	return q
}

// Query describes compute step st as Supports saw it when the plan placed
// it.
func (p *Plan) Query(st *Step) Query {
	return query(p.Graph, st.Node, st.Opset, p.inputs, p.shapeOnly)
}

// ShapeOnly reports whether value v depends on the graph inputs through
// their types only: the output of a Shape or Size node (ops.TypeOnly), or
// of a deterministic node without subgraphs whose inputs are all such
// values or constants that no Run replaces, at least one of them such a
// value (a Range up to a dimension, a mask compared from two Ranges).
// Constant folding leaves these in a class plan only, where they are
// fixed by the sizes each Run binds: a device may compute them once per
// binding (with Plan.Evaluate) instead of once per Run.
func (p *Plan) ShapeOnly(v int) bool { return v >= 0 && v < len(p.Values) && p.shapeOnly[p.Values[v]] }

// shapeOnlyValues returns the names of g's values that Plan.ShapeOnly
// reports.
func shapeOnlyValues(g *graph.Graph) map[string]bool {
	overridable := graphInputs(g)
	only := map[string]bool{}
	for _, n := range g.Nodes {
		derived := ops.Has(n.Domain, n.OpType, ops.TypeOnly)
		if !derived && !ops.Has(n.Domain, n.OpType, ops.Nondeterministic) && len(graph.NodeSubgraphs(n)) == 0 {
			derived = slices.ContainsFunc(n.Inputs, func(in string) bool { return only[in] }) &&
				!slices.ContainsFunc(n.Inputs, func(in string) bool {
					return in != "" && !only[in] && (g.Initializers[in] == nil || overridable[in])
				})
		}
		if !derived {
			continue
		}
		for _, out := range n.Outputs {
			if out != "" {
				only[out] = true
			}
		}
	}
	return only
}

// Fixed returns the value of constant v when no Run can replace it (an
// initializer that is not also a graph input, or a folded value), else
// nil.
func (p *Plan) Fixed(v int) *graph.Tensor {
	if slices.Contains(p.Inputs, v) {
		return nil
	}
	return p.Constants[v]
}

// graphInputs returns the set of g's input names.
func graphInputs(g *graph.Graph) map[string]bool {
	in := make(map[string]bool, len(g.Inputs))
	for _, v := range g.Inputs {
		in[v.Name] = true
	}
	return in
}

// Options control planning.
type Options struct {
	// Devices in order of preference; a node goes to the first that
	// supports it. The host device should come last as the fallback.
	Devices []Device
	// Inputs gives concrete types for graph inputs; inputs not listed keep
	// their declared types.
	Inputs map[string]*graph.Type
	// Alignment of arena offsets in bytes (default 64).
	Alignment int64
	// NoFolding keeps shape-only subgraphs as nodes instead of folding them
	// into constants.
	NoFolding bool
	// Stages, when set, places nodes by the pipeline stages of an IR 11
	// device configuration instead of by preference: a node runs on its
	// stage's device, or on the host device of Devices when that device
	// does not support it. Devices must list every device of Stages. The
	// configuration's sharding specs apply: a node on sharded values runs
	// once per shard, on the shard's logical device (see Plan.Shards and
	// Plan.Comms).
	Stages *Stages
	// Outputs, when set, names the graph outputs to compute: the plan
	// keeps only them and the nodes they need. Each must be a graph output.
	Outputs []string
	// HostMemoryLimit, when positive, bounds the host memory of a Run of
	// the plan, in bytes: the host arena and every tensor of known size
	// allocated on its own (graph outputs, values on the host outside the
	// arena). New fails with ErrOutOfMemory when the plan needs more;
	// kernels check what they allocate at run time against the limit left
	// beside the arena (see Plan.HostMemoryLimit).
	HostMemoryLimit int64
	// Float16, when set, plans a float32 model in the float16 mode: after
	// fusion, the nodes whose ops' rules allow it (ops.HalfRuleOf) compute
	// on float16 tensors, with Casts where float32 and float16 values meet
	// and float16 copies of their float32 constants, kept in Float16 for
	// every plan of the model (see toHalf).
	Float16 *HalfConstants
	// DimMax gives, by name, the largest size of symbolic input
	// dimensions (Plan.DimMax).
	DimMax map[string]int64
}

// StepKind tells compute steps from transfers.
type StepKind uint8

// Step kinds.
const (
	Compute StepKind = iota
	Transfer
)

// Step is one unit of execution.
type Step struct {
	Kind StepKind
	// Node is the node a compute step runs.
	Node *graph.Node
	// Opset is the import version of the node's domain.
	Opset int64
	// Device runs a compute step.
	Device string
	// Logical is the configuration's logical device ("d0", ...) that a
	// compute step belongs to under Options.Stages, else "".
	Logical string
	// In and Out are value indices (see Plan.Values); -1 marks an omitted
	// optional input or output. Captured lists the outer-scope values that
	// the node's subgraphs read.
	In, Out  []int
	Captured []int
	// From, To and Bytes describe a transfer of value In[0] (Bytes is -1
	// when the size is known only at run time).
	From, To string
	Bytes    int64
	// Release lists values whose last use is this step.
	Release []int
	// Declined lists the devices ahead of Device in the planner's order
	// that declined a compute step's node, and why.
	Declined []Declined
}

// Buffer is where a value lives in its device's arena. Values without a
// Buffer (graph outputs, values of unknown size, weights) are allocated on
// their own.
type Buffer struct {
	Device       string
	Offset, Size int64
	// First and Last are the step indices between which the buffer is live.
	First, Last int
	// AliasOf is the value index whose buffer this value shares (a reshape
	// that may be a view), or -1.
	AliasOf int
	// Part, where set, places this value inside another's buffer: a
	// Concat's input that its producer writes where the Concat's output
	// holds it (see concatParts). Offset and Size are then its own, First
	// and Last the Concat output's.
	Part *BufferPart
}

// BufferPart is where a value lies inside the buffer of value Of: At
// bytes from its start.
type BufferPart struct {
	Of int
	At int64
}

// Plan is the result of planning a model for concrete input types.
type Plan struct {
	Model *graph.Model
	// Graph is the planned graph: the model's main graph with shape-only
	// subgraphs folded into constants.
	Graph *graph.Graph
	// Values names every value; indices into it identify values in steps.
	Values     []string
	ValueIndex map[string]int
	// Types are the inferred types by value index (nil where unknown).
	Types []*graph.Type
	// Constants are the weights and folded values by value index.
	Constants map[int]*graph.Tensor
	// Inputs and Outputs are the indices of the graph's runtime inputs (those
	// without an initializer, plus overridable ones) and outputs.
	Inputs, Outputs []int
	Steps           []Step
	// Buffers are arena slots by value index.
	Buffers map[int]*Buffer
	// ArenaBytes is each device's arena size: the peak of its live buffers.
	ArenaBytes map[string]int64
	// UnsharedBytes is what the arena buffers would take without reuse.
	UnsharedBytes int64
	// Folded is the number of nodes replaced by constants at plan time.
	Folded int
	// Fused is the number of nodes that fusion removed at plan time (an
	// activation merged into its Conv, a written-out LayerNormalization
	// into one node).
	Fused int
	// Half is the number of nodes the float16 mode (Options.Float16) made
	// float16.
	Half int
	// Stages is Options.Stages: the configuration that placed the nodes,
	// nil without one.
	Stages *Stages
	// Notes are remarks on how the plan applies the model's multi-device
	// annotations (shared devices, sharding not applied).
	Notes []string
	// Comms are the communication nodes that applying the sharding specs
	// inserted, and Shards the nodes it made by running a model node on
	// one shard, by node name; both nil without sharding specs.
	Comms  map[string]Comm
	Shards map[string]Shard

	// HostMemoryLimit is Options.HostMemoryLimit (0: none), and
	// HostBytes what the plan itself takes of it: the host arena and the
	// host tensors of known size allocated on their own.
	HostMemoryLimit, HostBytes int64

	// DimMax is Options.DimMax: a device may size the memory of a class
	// plan's steps for those sizes of its symbolic dimensions at once.
	DimMax map[string]int64
	// Evaluate is the Folder's (see Folder) that constant folding used,
	// nil without one: a device computes the values Plan.ShapeOnly
	// reports with it.
	Evaluate ops.Evaluator

	// hoisted counts the transfers of graph inputs and constants that
	// place put before every compute step.
	hoisted int
	// shapeOnly names the values ShapeOnly reports; inputs the graph's
	// inputs (graphInputs), which Query reads.
	shapeOnly, inputs map[string]bool
}

// New plans m. It never modifies m except for recording inferred types of
// subgraph values. A panic while planning (a bug: inference rules, which
// compute the folded constants, already turn theirs into errors naming
// the node) becomes an error, as the last line of defence.
func New(m *graph.Model, opts Options) (_ *Plan, err error) {
	defer func() {
		if r := recover(); r != nil {
			if err = graph.FaultError(r); err == nil {
				err = fmt.Errorf("panic while planning: %v", r)
			}
			err = fmt.Errorf("planner: model %q: %w", m.Name, err)
		}
	}()
	if len(opts.Devices) == 0 {
		return nil, errors.New("planner: no devices")
	}
	if opts.Alignment <= 0 {
		opts.Alignment = 64
	}
	if opts.Stages != nil {
		if err := CheckDeviceConfigurations(m); err != nil {
			return nil, fmt.Errorf("planner: %w", err)
		}
	}
	pm, g := cloneModel(m)
	eval := evaluator(opts.Devices)
	known, err := ops.InferModel(pm, opts.Inputs, eval)
	if err != nil {
		return nil, fmt.Errorf("planner: model %q: %w", m.Name, err)
	}
	p := &Plan{Model: pm, Graph: g, ValueIndex: map[string]int{}, Constants: map[int]*graph.Tensor{},
		Buffers: map[int]*Buffer{}, ArenaBytes: map[string]int64{}, Evaluate: eval, DimMax: opts.DimMax}
	if !opts.NoFolding {
		p.Folded = ops.FoldConstants(pm, known) + foldConstantNodes(g)
	}
	if opts.Stages != nil {
		p.Stages = opts.Stages
		p.Notes = slices.Clone(opts.Stages.Notes)
		if err := p.shardTensors(opts.Stages); err != nil {
			return nil, err
		}
	}
	if opts.Outputs != nil {
		if err := selectOutputs(g, opts.Outputs); err != nil {
			return nil, fmt.Errorf("planner: model %q: %w", m.Name, err)
		}
	}
	p.Fused = fuse(pm, g, opts.Devices)
	if opts.Float16 != nil {
		p.Half = toHalf(pm, g, opts.Float16)
	}
	p.shapeOnly, p.inputs = shapeOnlyValues(g), graphInputs(g)
	for name, t := range g.Initializers {
		p.Constants[p.index(name)] = t
	}
	for _, in := range g.Inputs {
		i := p.index(in.Name)
		p.Inputs = append(p.Inputs, i)
	}
	for _, out := range g.Outputs {
		p.Outputs = append(p.Outputs, p.index(out.Name))
	}
	if err := p.place(opts.Devices, opts.Stages); err != nil {
		return nil, err
	}
	p.Types = make([]*graph.Type, len(p.Values))
	for i, name := range p.Values {
		p.Types[i] = g.TypeOf(name)
	}
	p.lifetimes()
	p.assignOffsets(opts.Alignment)
	p.HostMemoryLimit = opts.HostMemoryLimit
	if err := p.checkHostMemory(); err != nil {
		return nil, fmt.Errorf("planner: model %q: %w", m.Name, err)
	}
	return p, nil
}

// selectOutputs keeps of g's outputs those named, in the graph's order,
// and of its nodes those they need: a node stays when a kept node or
// output reads one of its outputs, through its inputs or the values its
// subgraphs capture.
func selectOutputs(g *graph.Graph, names []string) error {
	want := map[string]bool{}
	for _, name := range names {
		want[name] = true
	}
	var outs []*graph.ValueInfo
	for _, o := range g.Outputs {
		if want[o.Name] {
			outs = append(outs, o)
			delete(want, o.Name)
		}
	}
	if len(want) > 0 {
		missing := slices.Sorted(maps.Keys(want))
		return fmt.Errorf("no graph output %s to compute", strings.Join(missing, ", "))
	}
	g.Outputs = outs
	needed := map[string]bool{}
	for _, o := range outs {
		needed[o.Name] = true
	}
	keep := make([]bool, len(g.Nodes))
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		if !slices.ContainsFunc(n.Outputs, func(o string) bool { return needed[o] }) {
			continue
		}
		keep[i] = true
		for _, in := range append(slices.Clone(n.Inputs), graph.Captured(n)...) {
			needed[in] = true
		}
	}
	nodes := make([]*graph.Node, 0, len(g.Nodes))
	for i, n := range g.Nodes {
		if keep[i] {
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	return nil
}

// foldConstantNodes removes each Constant node with a tensor value and
// each Identity of a constant tensor whose output is not a graph output,
// making the output an initializer (for an Identity, another name for the
// same tensor: no copy). PyTorch exports shared weights as Identities,
// paddle2onnx every weight as a Constant node; folded, they stay
// constants that a device uploads once, whatever their size
// (FoldConstants folds only small values). It returns the number of
// nodes removed.
func foldConstantNodes(g *graph.Graph) int {
	fixed := graphInputs(g)
	for _, o := range g.Outputs {
		fixed[o.Name] = true
	}
	nodes := g.Nodes[:0:0]
	for _, n := range g.Nodes {
		if n.Domain == graph.DefaultDomain && len(n.Outputs) == 1 && !fixed[n.Outputs[0]] {
			var t *graph.Tensor
			switch {
			case n.OpType == "Identity" && len(n.Inputs) == 1 && !fixed[n.Inputs[0]]:
				t = g.Initializers[n.Inputs[0]]
			case n.OpType == "Constant" && len(n.Inputs) == 0:
				t = n.AttrTensor("value")
			}
			if t != nil {
				g.Initializers[n.Outputs[0]] = t
				continue
			}
		}
		nodes = append(nodes, n)
	}
	removed := len(g.Nodes) - len(nodes)
	if removed > 0 {
		g.Nodes = nodes
	}
	return removed
}

func cloneModel(m *graph.Model) (*graph.Model, *graph.Graph) {
	pm := *m
	g := *m.Graph
	g.ValueInfo = make(map[string]*graph.ValueInfo, len(m.Graph.ValueInfo))
	for k, v := range m.Graph.ValueInfo {
		c := *v
		g.ValueInfo[k] = &c
	}
	g.Initializers = maps.Clone(m.Graph.Initializers)
	g.Nodes = append([]*graph.Node{}, m.Graph.Nodes...)
	pm.Graph = &g
	return &pm, &g
}

func (p *Plan) index(name string) int {
	if i, ok := p.ValueIndex[name]; ok {
		return i
	}
	p.ValueIndex[name] = len(p.Values)
	p.Values = append(p.Values, name)
	return len(p.Values) - 1
}

func (p *Plan) indices(names []string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		if n == "" {
			out[i] = -1
			continue
		}
		out[i] = p.index(n)
	}
	return out
}

// place assigns every node to the first device that supports it, or by its
// pipeline stage under st, and adds a transfer step wherever a value is
// needed on a device it is not on yet. Values cross between two devices
// other than the host through the host.
func (p *Plan) place(devices []Device, st *Stages) error {
	g := p.Graph
	var sp *stagePlacer
	if st != nil {
		var err error
		if sp, err = newStagePlacer(p.Model, st, devices); err != nil {
			return fmt.Errorf("planner: %w", err)
		}
		sp.comm = p.comm
	}
	where := map[int]map[string]bool{}
	for i := range p.Constants {
		where[i] = map[string]bool{HostDevice: true}
		for _, d := range devices {
			if holdsConstants(d) && p.Fixed(i) != nil {
				where[i][d.Name()] = true
			}
		}
	}
	for _, i := range p.Inputs {
		where[i] = map[string]bool{HostDevice: true}
	}
	var unsupported []string
	overridable := graphInputs(g)
	for _, n := range g.Nodes {
		opset := p.Model.OpsetOf(n)
		q := query(g, n, opset, overridable, p.shapeOnly)
		var dev, logical string
		var declined []Declined
		if sp != nil {
			dev, logical = sp.place(n, q)
		} else {
			for _, d := range devices {
				r := Decline(d, q)
				if r == "" {
					dev = d.Name()
					break
				}
				declined = append(declined, Declined{d.Name(), r})
			}
		}
		if dev == "" {
			unsupported = append(unsupported, unsupportedNode(q, devices))
			continue
		}
		captured := p.indices(graph.Captured(n))
		in := p.indices(n.Inputs)
		for _, v := range append(append([]int{}, in...), captured...) {
			if v >= 0 {
				p.move(where, v, dev)
			}
		}
		out := p.indices(n.Outputs)
		for _, v := range out {
			if v >= 0 {
				where[v] = map[string]bool{dev: true}
			}
		}
		p.Steps = append(p.Steps, Step{Kind: Compute, Node: n, Opset: opset, Device: dev, Logical: logical, In: in, Out: out, Captured: captured, Declined: declined})
	}
	if len(unsupported) > 0 {
		return fmt.Errorf("planner: model %q: %w (%d): %s", p.Model.Name, ErrUnsupported, len(unsupported), strings.Join(unsupported, "; "))
	}
	for _, v := range p.Outputs {
		if len(where[v]) == 0 {
			return fmt.Errorf("planner: model %q: graph output %q is never computed", p.Model.Name, p.Values[v])
		}
		p.move(where, v, HostDevice)
	}
	return nil
}

// unsupportedNode describes a node no device can run: the node, its input
// types and each device's reason.
func unsupportedNode(q Query, devices []Device) string {
	types := make([]string, len(q.Inputs))
	for i, t := range q.Inputs {
		types[i] = t.String()
	}
	reasons := make([]string, len(devices))
	for i, d := range devices {
		reasons[i] = d.Name() + ": " + Decline(d, q)
	}
	return fmt.Sprintf("%s with inputs (%s): %s", q.Node, strings.Join(types, ", "), strings.Join(reasons, "; "))
}

// move adds the transfer steps that bring value v to device dev, where
// lists the devices each value is on. A value on neither the host nor dev
// goes through the host, so that no device needs to read another's values.
// A value not yet anywhere (an input the run may omit) comes from the host.
// A graph input or constant moves ahead of every compute step.
func (p *Plan) move(where map[int]map[string]bool, v int, dev string) {
	if where[v][dev] {
		return
	}
	if where[v] == nil {
		where[v] = map[string]bool{}
	}
	if len(where[v]) > 0 && !where[v][HostDevice] {
		from := slices.Sorted(maps.Keys(where[v]))[0]
		p.Steps = append(p.Steps, Step{Kind: Transfer, In: []int{v}, From: from, To: HostDevice, Bytes: p.byteSize(v)})
		where[v][HostDevice] = true
		if dev == HostDevice {
			return
		}
	}
	st := Step{Kind: Transfer, In: []int{v}, From: HostDevice, To: dev, Bytes: p.byteSize(v)}
	if slices.Contains(p.Inputs, v) || p.Constants[v] != nil {
		// On the host before any step runs: moved first, so that the
		// move does not split a device's run of steps.
		p.Steps = slices.Insert(p.Steps, p.hoisted, st)
		p.hoisted++
	} else {
		p.Steps = append(p.Steps, st)
	}
	where[v][dev] = true
}

// comm returns what communication node n moves, when n is a node that
// applying the sharding specs inserted (see Plan.Comms).
func (p *Plan) comm(n *graph.Node) (Comm, bool) {
	c, ok := p.Comms[n.Name]
	return c, ok && n.Index < 0
}

// byteSize is the size of a tensor value when its type is fully known, else -1.
func (p *Plan) byteSize(v int) int64 {
	t := p.Graph.TypeOf(p.Values[v])
	if t == nil || t.Kind != graph.TensorKind || !t.Shape.Known() || t.Elem == graph.String || t.Elem.Bits() == 0 {
		return -1
	}
	n, err := graph.Bytes(t.Elem, t.Shape.Ints())
	if err != nil {
		// Inference refused such shapes; a -1 here keeps the value out of
		// the arena rather than sizing a buffer from a wrapped count.
		return -1
	}
	return n
}

// keepTransposedOperands keeps the input of a Transpose alive until the
// product that alone reads the Transpose's output, where both run on the
// same device other than the host: such a device may read the input
// through permuted strides instead of running the Transpose (the Vulkan
// device does, at compile time), which it cannot where the product's
// output was given the input's memory, dead once the Transpose ran. On
// the host the planner fuses the pairs it can (MatMulTransB) itself.
func (p *Plan) keepTransposedOperands(last []int) {
	reads := map[int][]int{}
	for s, st := range p.Steps {
		for _, v := range append(append([]int{}, st.In...), st.Captured...) {
			if v >= 0 {
				reads[v] = append(reads[v], s)
			}
		}
	}
	for _, st := range p.Steps {
		n := st.Node
		if st.Kind != Compute || st.Device == HostDevice || n.Domain != graph.DefaultDomain || n.OpType != "Transpose" ||
			len(st.In) == 0 || st.In[0] < 0 || len(st.Out) != 1 || st.Out[0] < 0 || len(reads[st.Out[0]]) != 1 {
			continue
		}
		j := reads[st.Out[0]][0]
		pr := p.Steps[j]
		if pr.Kind == Compute && pr.Device == st.Device && ops.StridedProduct(pr.Node) {
			last[st.In[0]] = max(last[st.In[0]], j)
		}
	}
}

// concatParts returns the Concat inputs that their producers may write
// where the Concat's output holds them, each with its place: for a Concat
// on the host along an axis with only 1s before it (so each input is one
// contiguous block of the output) whose output lives in the arena (known
// size, not a graph output), every input of a byte-sized type written by
// another compute step on the host that is not a view or a Concat, read
// by nothing else and not a graph output. The Concat's kernel then finds
// its inputs in place and copies nothing (a producer whose kernel
// returns memory of its own is copied as before).
//
// Concats whose inputs are each a prefix of one longest Concat's (a
// DenseNet block's: each layer reads the concatenation of the block's
// input and every earlier layer's output, the block's output is that of
// all) share its buffer: the longest's inputs may then be read by every
// Concat of the chain, and each shorter Concat's output is returned too,
// as the head of the longest's buffer, so that no Concat of the chain
// copies anything.
func (p *Plan) concatParts(isOutput map[int]bool) map[int]BufferPart {
	reads := map[int]int{}
	producer := map[int]*Step{}
	for s := range p.Steps {
		st := &p.Steps[s]
		for _, v := range append(append([]int{}, st.In...), st.Captured...) {
			if v >= 0 {
				reads[v]++
			}
		}
		if st.Kind == Compute {
			for _, v := range st.Out {
				if v >= 0 {
					producer[v] = st
				}
			}
		}
	}
	var concats []*Step
	axes := map[*Step]int64{}
	for s := range p.Steps {
		st := &p.Steps[s]
		n := st.Node
		if st.Kind != Compute || st.Device != HostDevice || n.Domain != graph.DefaultDomain || n.OpType != "Concat" ||
			len(st.Out) != 1 || st.Out[0] < 0 || isOutput[st.Out[0]] || p.byteSize(st.Out[0]) <= 0 {
			continue
		}
		out := p.Types[st.Out[0]]
		shape := out.Shape.Ints()
		axis := ops.Params[ops.ConcatParams](n, p.Model.OpsetOf(n)).Axis
		if axis < 0 {
			axis += int64(len(shape))
		}
		if axis < 0 || axis >= int64(len(shape)) || graph.NumElements(shape[:axis]) != 1 || out.Elem.Bits() < 8 {
			continue
		}
		concats = append(concats, st)
		axes[st] = axis
	}
	// A Concat's inputs can only be a prefix of one with the same first
	// input: the chains are looked for among those alone.
	type lead struct {
		in   int
		axis int64
	}
	byLead := map[lead][]*Step{}
	for _, c := range concats {
		if len(c.In) > 0 {
			k := lead{c.In[0], axes[c]}
			byLead[k] = append(byLead[k], c)
		}
	}
	parts := map[int]BufferPart{}
	for _, top := range concats {
		if len(top.In) == 0 {
			continue
		}
		// chain is the Concats whose inputs are a prefix of top's: all of
		// them, top last, or nothing where top is itself a prefix of
		// another's or one of them is a prefix of a Concat outside it.
		chain := concatChain(top, byLead[lead{top.In[0], axes[top]}], axes)
		if chain == nil {
			continue
		}
		// readers counts, for each input of top, the Concats of the chain
		// that read it.
		readers := map[int]int{}
		for _, c := range chain {
			for _, v := range c.In {
				readers[v]++
			}
		}
		mine := map[int]BufferPart{}
		at := int64(0)
		for _, v := range top.In {
			pr := producer[v]
			_, twice := mine[v]
			size := int64(-1)
			if v >= 0 {
				size = p.byteSize(v)
			}
			if size <= 0 || pr == nil || twice || reads[v] != readers[v] || isOutput[v] || pr.Device != HostDevice ||
				ops.Has(pr.Node.Domain, pr.Node.OpType, ops.View) || pr.Node.OpType == "Concat" {
				mine = nil
				break
			}
			mine[v] = BufferPart{Of: top.Out[0], At: at}
			at += size
		}
		if mine == nil {
			continue
		}
		for _, c := range chain[:len(chain)-1] {
			mine[c.Out[0]] = BufferPart{Of: top.Out[0]}
		}
		maps.Copy(parts, mine)
	}
	return parts
}

// concatChain returns the Concats of concats (top among them, along axis
// axes[c]) whose inputs are a prefix of top's, in order of their inputs' count, top last;
// nil where top's inputs are a prefix of another's, or where a Concat of
// the chain has its inputs a prefix of a Concat not in it.
func concatChain(top *Step, concats []*Step, axes map[*Step]int64) []*Step {
	prefix := func(a, b *Step) bool {
		return axes[a] == axes[b] && len(a.In) <= len(b.In) && slices.Equal(a.In, b.In[:len(a.In)])
	}
	var chain []*Step
	for _, c := range concats {
		switch {
		case c == top:
		case prefix(top, c):
			return nil
		case prefix(c, top):
			chain = append(chain, c)
		}
	}
	for _, c := range chain {
		for _, o := range concats {
			if o != top && prefix(c, o) && !prefix(o, top) {
				return nil
			}
		}
	}
	slices.SortStableFunc(chain, func(a, b *Step) int { return len(a.In) - len(b.In) })
	return append(chain, top)
}

// lifetimes computes, for every value, the last step that uses it, fills
// Step.Release, and creates arena buffers for intermediate tensors of known
// size.
func (p *Plan) lifetimes() {
	last := make([]int, len(p.Values))
	for i := range last {
		last[i] = -1
	}
	root := make([]int, len(p.Values))
	for i := range root {
		root[i] = i
	}
	isOutput := map[int]bool{}
	for _, v := range p.Outputs {
		isOutput[v] = true
	}
	parts := p.concatParts(isOutput)
	// firstPart is, for each Concat output whose inputs are written in
	// place, the step that writes its first part.
	firstPart := map[int]int{}
	for s, st := range p.Steps {
		for _, v := range append(append([]int{}, st.In...), st.Captured...) {
			if v >= 0 {
				last[v] = s
				last[root[v]] = max(last[root[v]], s)
			}
		}
		if st.Kind != Compute {
			continue
		}
		// The CPU kernel of a view may return input 0 itself: the
		// output keeps the input's memory alive.
		if ops.Has(st.Node.Domain, st.Node.OpType, ops.View) && len(st.In) > 0 && st.In[0] >= 0 && st.Out[0] >= 0 {
			root[st.Out[0]] = root[st.In[0]]
		}
		for _, v := range st.Out {
			if v < 0 {
				continue
			}
			last[v] = max(last[v], s)
			if isOutput[v] {
				continue
			}
			if root[v] != v {
				p.Buffers[v] = &Buffer{Device: st.Device, AliasOf: root[v], Offset: -1, Size: -1}
				continue
			}
			if part, ok := parts[v]; ok {
				p.Buffers[v] = &Buffer{Device: st.Device, Size: p.byteSize(v), First: s, AliasOf: -1, Part: &part}
				if f, seen := firstPart[part.Of]; !seen || s < f {
					firstPart[part.Of] = s
				}
				continue
			}
			if size := p.byteSize(v); size > 0 {
				first := s
				if f, ok := firstPart[v]; ok {
					first = f
				}
				p.Buffers[v] = &Buffer{Device: st.Device, Size: size, First: first, AliasOf: -1}
			}
		}
	}
	p.keepTransposedOperands(last)
	// A view extends its root's lifetime; a root whose view is a graph
	// output must not live in the arena at all.
	for v := range p.Values {
		r := root[v]
		if r == v {
			continue
		}
		last[r] = max(last[r], last[v])
		if isOutput[v] {
			delete(p.Buffers, r)
		}
	}
	// A Concat's buffer lives until the last read of its parts (a
	// shorter Concat of its chain is read before it runs, but need not
	// be).
	for v, b := range p.Buffers {
		if b.Part != nil {
			last[b.Part.Of] = max(last[b.Part.Of], last[v])
		}
	}
	for v, b := range p.Buffers {
		if b.AliasOf >= 0 {
			if _, ok := p.Buffers[b.AliasOf]; !ok {
				delete(p.Buffers, v)
			}
			continue
		}
		if b.Part != nil {
			// A part whose Concat output lost its buffer (a view of it is
			// a graph output) is allocated on its own; the Concat copies.
			if _, ok := p.Buffers[b.Part.Of]; !ok {
				delete(p.Buffers, v)
			}
			continue
		}
		b.Last = max(last[v], b.First)
	}
	for v := range p.Values {
		if last[v] >= 0 && !isOutput[v] && p.Constants[v] == nil {
			p.Steps[last[v]].Release = append(p.Steps[last[v]].Release, v)
		}
	}
	for s := range p.Steps {
		sort.Ints(p.Steps[s].Release)
	}
}
