// Package onnxvk runs ONNX models from Go, on Vulkan GPUs where a kernel
// exists and on the CPU otherwise.
//
//	sess, err := onnxvk.Load("model.onnx")
//	if err != nil { ... }
//	defer sess.Close()
//	x, _ := onnxvk.NewTensor([]int64{1, 3, 224, 224}, pixels)
//	out, err := sess.Run(ctx, map[string]*onnxvk.Tensor{"input": x})
//
// A Session is safe for concurrent use. It plans the model once for each
// shape class of its inputs (sizes that vary between Runs stay symbolic,
// see WithoutShapeClasses) and reuses that plan.
package onnxvk

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/hostmem"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrClosed: the session was closed, before the call or while it
	// was in progress.
	ErrClosed = errors.New("session closed")
	// ErrUnknownInput: Run got an input name the model does not have.
	ErrUnknownInput = errors.New("unknown input")
	// ErrUnknownOutput: RunOptions.Only names an output the model does not
	// have.
	ErrUnknownOutput = errors.New("unknown output")
	// ErrMissingInput: Run lacks a required input.
	ErrMissingInput = backend.ErrMissingInput
	// ErrInputMismatch: an input's element type or shape disagrees with the model.
	ErrInputMismatch = errors.New("input does not match the model")
	// ErrDeviceUnavailable: the requested device does not exist here.
	ErrDeviceUnavailable = backend.ErrDeviceUnavailable
	// ErrUnsupported: the model has nodes no device can run.
	ErrUnsupported = planner.ErrUnsupported
	// ErrInvalidModel: the model file is malformed or fails validation.
	ErrInvalidModel = loader.ErrInvalidModel
	// ErrUnknownOp: the model uses ops unknown to ONNX at its opset.
	ErrUnknownOp = loader.ErrUnknownOp
	// ErrOutOfMemory: a device could not allocate the memory a Run needs;
	// the session stays usable (see WithCPUFallbackOnOOM).
	ErrOutOfMemory = backend.ErrOutOfMemory
	// ErrDeviceLost: the GPU stopped working; close the session.
	ErrDeviceLost = backend.ErrDeviceLost
)

// Option configures Load, LoadBytes and NewSession.
type Option func(*options)

type options struct {
	device  string
	name    string
	baseDir string
	// loader holds the options passed on to the loader (WithoutMmap,
	// WithoutChecksums, WithModelSizeLimit).
	loader      []loader.Option
	noFolding   bool
	memLimit    int64
	cpuFallback bool
	threads     int
	// hostLimit is WithHostMemoryLimit; hostLimitSet tells it from the
	// default.
	hostLimit    int64
	hostLimitSet bool
	// fp16 is WithFP16, fp16Weights WithFP16Weights, vulkan
	// WithVulkanOptions.
	fp16, fp16Weights bool
	vulkan            []vulkan.OpenOption
	// configuration and mapping are WithConfiguration and WithDeviceMapping.
	configuration string
	mapping       []string
	// concrete is WithoutShapeClasses, concreteIf WithoutShapeClassesIf;
	// planBytes is WithPlanCacheBytes, planBytesSet tells it from the
	// default.
	concrete     bool
	concreteIf   func(inputs, outputs []ValueInfo) bool
	planBytes    int64
	planBytesSet bool
	// dimMax is WithDimMax.
	dimMax map[string]int64
}

// WithDevice chooses where the model runs: "auto" (the default: the best
// device present), "cpu", "vulkan" (the best Vulkan device) or a Vulkan
// device as "vulkan:N" (its index), "vulkan:NAME" or "vulkan:UUID" (see
// Devices).
func WithDevice(name string) Option { return func(o *options) { o.device = name } }

// WithName sets the model name used in error messages (the default is the
// file name).
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithBaseDir sets the folder external data files are read from, for
// LoadBytes (Load uses the model file's folder).
func WithBaseDir(dir string) Option { return func(o *options) { o.baseDir = dir } }

// WithoutMmap makes Load read the weights into memory the session owns
// instead of mapping the model's files: a file changed or truncated after
// Load then cannot affect, or fail, a Run (see loader.WithoutMmap).
func WithoutMmap() Option { return loaderOption(loader.WithoutMmap()) }

// WithoutChecksums skips checking the weights against the checksums the
// model states (an archive's CRC-32 per data entry, external data's SHA-1),
// for a faster Load that does not notice damaged weights (see
// loader.WithoutChecksums).
func WithoutChecksums() Option { return loaderOption(loader.WithoutChecksums()) }

// WithModelSizeLimit bounds the serialized model (the protobuf, without
// external data or archive data entries) that Load reads into memory at
// bytes; the default, and the most, is protobuf's 2 GiB limit (see
// loader.WithModelSizeLimit).
func WithModelSizeLimit(bytes int64) Option {
	return loaderOption(loader.WithModelSizeLimit(bytes))
}

func loaderOption(lo loader.Option) Option {
	return func(o *options) { o.loader = append(o.loader, lo) }
}

// WithoutConstantFolding keeps shape-only subgraphs as nodes that run at
// every Run instead of folding them into constants at plan time.
func WithoutConstantFolding() Option { return func(o *options) { o.noFolding = true } }

// WithDeviceMemoryLimit caps the memory the session allocates on its GPU
// (weights and the buffers of Runs together) at bytes; 0, the default,
// means no cap. Beyond the cap a Run fails with ErrOutOfMemory, as when the
// GPU itself runs out.
func WithDeviceMemoryLimit(bytes int64) Option { return func(o *options) { o.memLimit = bytes } }

// WithHostMemoryLimit bounds the host memory of a Run at bytes; 0 or less
// means no bound. The default is DefaultHostMemoryLimit. A plan whose
// memory (its arena and the tensors of known size it allocates on its own,
// the outputs among them) exceeds the limit fails with ErrOutOfMemory
// naming the node and the size before anything is allocated; at run time,
// each tensor whose size comes from data (a shape or scale read at run
// time, NonZero) or grows (a Loop's scan outputs, a sequence) is checked,
// with the plan's memory, before it is allocated. The limit is a bound on
// what a model makes the session allocate, not on the process's heap:
// the inputs, the weights and concurrent Runs are not counted.
func WithHostMemoryLimit(bytes int64) Option {
	return func(o *options) { o.hostLimit, o.hostLimitSet = bytes, true }
}

// DefaultHostMemoryLimit is the host memory limit of a session without
// WithHostMemoryLimit: three quarters of the memory the process may use
// (on Linux the machine's RAM, or its cgroup's memory.max, or what its
// address space limit, RLIMIT_AS or RLIMIT_DATA, leaves beside what it
// maps already, where that is smaller); 0 (no limit) where that memory is
// unknown.
func DefaultHostMemoryLimit() int64 { return hostmem.Physical() / 4 * 3 }

// WithCPUFallbackOnOOM makes a Run whose plan cannot get the GPU memory it
// needs (ErrOutOfMemory) run that plan on the CPU instead, then and in
// later Runs with the same input shapes; other shapes still try the GPU.
func WithCPUFallbackOnOOM() Option { return func(o *options) { o.cpuFallback = true } }

// WithoutShapeClasses plans each distinct set of input shapes on its own,
// as a plan with every size known, instead of one plan per shape class
// (see README, "Plans and shape classes"): a concrete plan folds its shape
// computations (Shape, Range) at planning and its GPU programs are lowered
// once, at the cost of planning again whenever a size changes; a class
// plan's GPU programs compute them once per set of sizes and lower their
// nodes again for each new set.
func WithoutShapeClasses() Option { return func(o *options) { o.concrete = true } }

// WithoutShapeClassesIf is WithoutShapeClasses where concrete, called once
// at load with the model's inputs and outputs (as Session.Inputs and
// Outputs give them), returns true: for a program that chooses from the
// model's declared shapes (a server that plans each batch size on its own
// where the batch is the only variable dimension), without loading the
// model twice.
func WithoutShapeClassesIf(concrete func(inputs, outputs []ValueInfo) bool) Option {
	return func(o *options) { o.concreteIf = concrete }
}

// WithDimMax gives the largest size the symbolic dimension name (an
// input's dim_param, such as a decoder's past length) takes in this
// session's Runs, as an optimisation profile's maximum does: a class plan
// that leaves the dimension symbolic sizes its GPU buffers for that size
// at its first Run, so that GPU memory stays flat while the size grows up
// to it. A larger size still runs, growing the buffers as without it.
func WithDimMax(name string, max int64) Option {
	return func(o *options) {
		if o.dimMax == nil {
			o.dimMax = map[string]int64{}
		}
		o.dimMax[name] = max
	}
}

// WithPlanCacheBytes bounds the memory of the session's cached plans (host
// arenas and device memory, not the weights, which the plans share) at
// bytes: beyond it the least recently used plans leave the cache and free
// their memory, all but the plan in use; 0 or less means no bound. The
// default is DefaultPlanCacheBytes. At most 32 plans stay cached either
// way.
func WithPlanCacheBytes(bytes int64) Option {
	return func(o *options) { o.planBytes, o.planBytesSet = bytes, true }
}

// WithThreads bounds the goroutines that compute a Run's CPU kernels at
// n: each parallel loop runs on the Run's own goroutine and on at most n-1
// workers lent by one pool the whole process shares, and the session's
// concurrent Runs share those n-1 between them. The pool holds
// GOMAXPROCS-1 workers and lends only idle ones, so sessions together
// never run more of them than that; n above GOMAXPROCS counts as
// GOMAXPROCS. 0, the default, means GOMAXPROCS. WithThreads(1) runs every
// kernel on the calling goroutine alone. Results are the same for every n.
func WithThreads(n int) Option { return func(o *options) { o.threads = n } }

// ValueInfo describes a model input or output.
type ValueInfo struct {
	Name string
	// Kind is what the value is: "tensor", "sparse", "sequence", "map",
	// "optional" or "opaque"; "" when the model does not say.
	Kind string
	// DType is a tensor's element type.
	DType DType
	// Shape is a tensor's shape, -1 for a dimension of unknown size; nil
	// when the rank is unknown. Dims names each dimension's symbol ("N")
	// where the model gives one, "" elsewhere.
	Shape []int64
	Dims  []string
	// Type is the full type as text, "float32[N 3 224 224]" for one;
	// "?" when unknown.
	Type string
	// Optional is true for inputs that have a default value in the model.
	Optional bool
}

// Session is a loaded model ready to run.
type Session struct {
	model   *graph.Model
	devices []backend.Device
	opts    options
	// stages places nodes by the configuration in force (nil: none), and
	// multi describes it.
	stages *planner.Stages
	multi  MultiDevice
	// precision is what Precision reports; half holds the float16 copies
	// of constants in the float16 mode, nil outside it.
	precision Precision
	half      *planner.HalfConstants
	inputs    []ValueInfo
	outputs   []ValueInfo
	// reason says why the session runs where it does (DeviceReason).
	reason string
	// threads is the thread budget of its CPU kernels (WithThreads).
	threads *hostfallback.Threads

	// calls tracks the calls in progress, which Close stops and waits
	// for.
	calls calls
	// closeOnce runs Close's work once; closeErr is its result.
	closeOnce sync.Once
	closeErr  error

	// mu guards the plan cache.
	mu    sync.Mutex
	plans planCache
}

// Load reads a model file and prepares it to run.
func Load(path string, opts ...Option) (*Session, error) {
	o := collect(opts)
	m, err := loader.Load(path, o.loaderOptions()...)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	if o.name != "" {
		m.Name = o.name
	}
	return newSession(m, o)
}

// LoadBytes prepares a model from its serialized bytes.
func LoadBytes(data []byte, opts ...Option) (*Session, error) {
	o := collect(opts)
	name := o.name
	if name == "" {
		name = "model"
	}
	m, err := loader.LoadBytes(data, name, o.loaderOptions()...)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	return newSession(m, o)
}

// NewSession prepares an already loaded (or built) model. The session
// takes ownership of m and closes it on Close.
func NewSession(m *graph.Model, opts ...Option) (*Session, error) {
	return newSession(m, collect(opts))
}

func collect(opts []Option) options {
	o := options{device: "auto"}
	for _, f := range opts {
		f(&o)
	}
	if !o.hostLimitSet {
		o.hostLimit = DefaultHostMemoryLimit()
	}
	if !o.planBytesSet {
		o.planBytes = DefaultPlanCacheBytes
	}
	return o
}

func (o options) loaderOptions() []loader.Option {
	if o.baseDir == "" {
		return o.loader
	}
	return append(slices.Clip(o.loader), loader.WithBaseDir(o.baseDir))
}

// newSession prepares m: its nodes are brought to their ops' canonical
// forms (ops.Canonicalize), in place, and the model validated again when
// that changed any, so that planning, kernels and lowerings see one form
// per op; Casts that widen constant weights (mixed-precision exports) are
// folded into float32 weights once (ops.FoldWeightCasts); then every
// node's attributes are read into its op's typed parameters once
// (ops.ParseParams), which every Run shares. The canonical
// forms, the validation and the first plan read weights (a shape, an
// axis): a mapped weight file truncated since Load fails the session with
// an error naming the tensor and the file (graph.CatchFaults).
func newSession(m *graph.Model, o options) (*Session, error) {
	err := graph.CatchFaults(func() error {
		if ops.Canonicalize(m) > 0 {
			if err := loader.Validate(m); err != nil {
				return err
			}
		}
		ops.FoldWeightCasts(m)
		return nil
	})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	if err := ops.ParseParams(m); err != nil {
		m.Close()
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	if o.threads < 0 {
		m.Close()
		return nil, fmt.Errorf("onnxvk: model %q: WithThreads(%d): want 0 (GOMAXPROCS) or more threads", m.Name, o.threads)
	}
	threads := hostfallback.NewThreads(o.threads)
	devs, stages, multi, err := openConfigured(m, o, threads)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	reason := ""
	if devs == nil {
		var why string
		if devs, why, err = openDevices(o.device, threads, o.vulkanOptions()...); err != nil {
			m.Close()
			return nil, fmt.Errorf("onnxvk: model %q: %w", m.Name, err)
		}
		reason = deviceReason(o.device, devs, why)
	} else {
		reason = fmt.Sprintf("runs on %s: device configuration %q maps its logical devices onto them", strings.Join(multi.Physical, ", "), multi.Configuration)
	}
	s := &Session{model: m, devices: devs, opts: o, stages: stages, multi: multi, reason: reason, threads: threads, calls: newCalls()}
	s.plans.budget = max(o.planBytes, 0)
	s.precision, s.half = choosePrecision(o, devs)
	for _, d := range devs {
		if l, ok := d.(interface{ SetMemoryLimit(int64) }); ok {
			l.SetMemoryLimit(o.memLimit)
		}
	}
	g := m.Graph
	for _, in := range g.Inputs {
		_, hasDefault := g.Initializers[in.Name]
		s.inputs = append(s.inputs, valueInfo(in, hasDefault))
	}
	for _, out := range g.Outputs {
		s.outputs = append(s.outputs, valueInfo(out, false))
	}
	if o.concreteIf != nil && o.concreteIf(s.Inputs(), s.Outputs()) {
		s.opts.concrete = true
	}
	// Plan once with the declared shapes, so that a model no device can run
	// fails at load rather than at the first Run.
	opts, _ := s.planOptions(nil, false)
	opts.NoFolding = true
	var p *planner.Plan
	if err := graph.CatchFaults(func() (err error) { p, err = planner.New(m, opts); return err }); err != nil {
		s.Close()
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	if s.half != nil {
		s.precision.Float32 = float32Ops(p)
	}
	return s, nil
}

// kindNames are ValueInfo.Kind's names of the value kinds.
var kindNames = map[graph.TypeKind]string{graph.TensorKind: "tensor", graph.SparseTensorKind: "sparse", graph.SequenceKind: "sequence",
	graph.MapKind: "map", graph.OptionalKind: "optional", graph.OpaqueKind: "opaque"}

func valueInfo(vi *graph.ValueInfo, optional bool) ValueInfo {
	v := ValueInfo{Name: vi.Name, Type: vi.Type.String(), Optional: optional}
	if t := vi.Type; t != nil {
		v.Kind, v.DType = kindNames[t.Kind], t.Elem
		if t.Kind == graph.TensorKind && t.Shape != nil {
			v.Shape, v.Dims = make([]int64, len(t.Shape)), make([]string, len(t.Shape))
			for i, d := range t.Shape {
				v.Shape[i], v.Dims[i] = -1, d.Param
				if d.Known() {
					v.Shape[i] = d.Value
				}
			}
		}
	}
	return v
}

// openDevices returns the devices for a device option, best first, the CPU
// last as the fallback. "auto" takes the Vulkan device vulkan.AutoIndex
// picks and the CPU alone when there is none, with why (vulkan.Open("auto")
// says it in one line); "vulkan" and "vulkan:N" fail when that device does
// not open. opts configure the Vulkan device; the CPU's kernels run within
// threads.
func openDevices(name string, threads *hostfallback.Threads, opts ...vulkan.OpenOption) (devs []backend.Device, why string, err error) {
	cpu := hostfallback.NewDevice(threads)
	switch {
	case name == "cpu":
		return []backend.Device{cpu}, "", nil
	case name == "" || name == "auto":
		d, err := vulkan.Open("auto", opts...)
		if err != nil {
			return []backend.Device{cpu}, err.Error(), nil
		}
		return []backend.Device{d, cpu}, "", nil
	case name == "vulkan" || strings.HasPrefix(name, "vulkan:"):
		d, err := vulkan.Open(name, opts...)
		if err != nil {
			return nil, "", fmt.Errorf("device %q: %w", name, err)
		}
		return []backend.Device{d, cpu}, "", nil
	}
	return nil, "", unknownDevice(name)
}

// unknownDevice is the error for a device name that names no device.
func unknownDevice(name string) error {
	return backend.Unavailable("device %q: unknown device (want auto, cpu, vulkan or vulkan:N)", name)
}

// planOptions returns the planner options for the input types on the
// session's devices, or on its CPU alone, and those devices.
func (s *Session) planOptions(types map[string]*graph.Type, cpuOnly bool) (planner.Options, []backend.Device) {
	devices, stages := s.devices, s.stages
	if cpuOnly {
		devices, stages = devices[len(devices)-1:], nil
	}
	pdevs := make([]planner.Device, len(devices))
	for i, d := range devices {
		pdevs[i] = d
	}
	opts := planner.Options{Devices: pdevs, Inputs: types, NoFolding: s.opts.noFolding, Stages: stages, DimMax: s.opts.dimMax,
		HostMemoryLimit: s.HostMemoryLimit()}
	if !cpuOnly {
		opts.Float16 = s.half
	}
	return opts, devices
}

// Threads is the most goroutines a Run computes a parallel loop of its CPU
// kernels on (see WithThreads): n, at most GOMAXPROCS.
func (s *Session) Threads() int { return s.threads.Workers() }

// HostMemoryLimit is the session's host memory limit in bytes (see
// WithHostMemoryLimit); 0 means none.
func (s *Session) HostMemoryLimit() int64 { return max(s.opts.hostLimit, 0) }

// Device names the device that runs the model's nodes ("cpu", "vulkan:0");
// under a device configuration, each logical device and what it maps onto
// ("d0=vulkan:0,d1=vulkan:0").
func (s *Session) Device() string {
	if s.stages == nil {
		return s.devices[0].Name()
	}
	names := make([]string, len(s.stages.Physical))
	for k, phys := range s.stages.Physical {
		names[k] = planner.LogicalName(k) + "=" + phys
	}
	return strings.Join(names, ",")
}

// Model returns the loaded model.
func (s *Session) Model() *graph.Model { return s.model }

// Inputs describes the model's inputs.
func (s *Session) Inputs() []ValueInfo { return append([]ValueInfo{}, s.inputs...) }

// Outputs describes the model's outputs.
func (s *Session) Outputs() []ValueInfo { return append([]ValueInfo{}, s.outputs...) }

// Run runs the model on inputs, by input name, and returns every output by
// name. Inputs with a default in the model may be omitted. Run is safe to
// call from many goroutines; ctx is checked between steps.
func (s *Session) Run(ctx context.Context, inputs map[string]*Tensor) (map[string]*Tensor, error) {
	return s.RunWith(ctx, inputs, RunOptions{})
}

// RunOptions choose how a Run hands over its outputs.
type RunOptions struct {
	// KeepOnDevice names outputs to leave in GPU memory as device tensors
	// (see Tensor): passed back as inputs of a later Run of the same
	// Session, they are read in place, never copied through the host (a
	// decoder's KV cache: each step's present outputs become the next
	// step's past inputs). An output computed on the CPU comes back as a
	// host tensor.
	KeepOnDevice []string
	// Outputs gives host tensors to write outputs into, by name, each of
	// its output's element type and shape: the Run fills it (a GPU copies
	// the result straight into it) and returns it, allocating nothing for
	// that output.
	Outputs map[string]*Tensor
	// Only, when set, names the outputs to compute: the Run plans and runs
	// just the nodes they need and returns only them (a plan per set of
	// names, cached like the plans per input shapes). A name the model
	// does not output fails with ErrUnknownOutput.
	Only []string
}

// RunWith is Run with options. Inputs may be device tensors of this
// Session: a step on their GPU reads them in place; a step on the CPU
// reads a host copy. A device tensor must not be released while a Run
// that reads it is in flight.
func (s *Session) RunWith(ctx context.Context, inputs map[string]*Tensor, opts RunOptions) (map[string]*Tensor, error) {
	defer runtime.KeepAlive(inputs)
	vals, err := s.tensorValues(inputs, "")
	if err != nil {
		return nil, err
	}
	o := backend.RunOptions{Keep: opts.KeepOnDevice}
	for name, t := range opts.Outputs {
		if t == nil || t.dev != nil {
			return nil, fmt.Errorf("onnxvk: model %q: the tensor to write output %q into must be a host tensor: %w", s.model.Name, name, ErrInputMismatch)
		}
		if o.Into == nil {
			o.Into = map[string]*graph.Tensor{}
		}
		o.Into[name] = t.t
	}
	out, err := s.runValues(ctx, vals, o, opts.Only)
	if err != nil {
		return nil, err
	}
	res, err := s.valueTensors(out)
	if err != nil {
		return nil, err
	}
	for name, t := range opts.Outputs {
		res[name] = t
	}
	return res, nil
}

// tensorValues returns inputs as values; at, when set, says which request
// they are in errors ("request 2: ").
func (s *Session) tensorValues(inputs map[string]*Tensor, at string) (map[string]graph.Value, error) {
	vals := make(map[string]graph.Value, len(inputs))
	for name, t := range inputs {
		if t == nil || t.t == nil && t.dev == nil {
			return nil, fmt.Errorf("onnxvk: model %q: %sinput %q is nil: %w", s.model.Name, at, name, ErrInputMismatch)
		}
		vals[name] = t.value()
	}
	return vals, nil
}

// valueTensors returns outputs as tensors, or an error for an output that
// is not a tensor.
func (s *Session) valueTensors(out map[string]graph.Value) (map[string]*Tensor, error) {
	res := make(map[string]*Tensor, len(out))
	for name, v := range out {
		if r, ok := v.(backend.Resident); ok {
			res[name] = deviceTensor(r)
			continue
		}
		t, ok := v.(*graph.Tensor)
		if !ok {
			return nil, fmt.Errorf("onnxvk: model %q: output %q is a %s, not a tensor: the Go API returns tensors only (onnxvk run prints the others)", s.model.Name, name, v.ValueType())
		}
		res[name] = &Tensor{t: t}
	}
	return res, nil
}

// runValues runs the model on graph values with options (see RunOptions).
func (s *Session) runValues(ctx context.Context, inputs map[string]graph.Value, o backend.RunOptions, only []string) (_ map[string]graph.Value, err error) {
	ctx, leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = leave(err) }()
	call, err := s.checkInputs(inputs)
	if err != nil {
		return nil, err
	}
	if only != nil {
		if only, err = s.checkOutputs(only); err != nil {
			return nil, err
		}
		call.fixed += "only=" + strings.Join(only, ",")
	}
	return runOn(s, call, only, func(ex *backend.Executor) (map[string]graph.Value, error) {
		return ex.RunWith(ctx, inputs, o)
	})
}

// checkOutputs returns the output names sorted, without repeats, or an
// error naming one the model does not output.
func (s *Session) checkOutputs(names []string) ([]string, error) {
	for _, name := range names {
		if !slices.ContainsFunc(s.outputs, func(o ValueInfo) bool { return o.Name == name }) {
			var have []string
			for _, o := range s.outputs {
				have = append(have, o.Name)
			}
			return nil, fmt.Errorf("onnxvk: model %q: output %q: %w (the model outputs %s)", s.model.Name, name, ErrUnknownOutput, strings.Join(have, ", "))
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(names))), nil
}

// runOn runs do on the executor for the input types of call, and,
// where the session falls back to the CPU when device memory runs out
// (WithCPUFallbackOnOOM), again on the CPU-only executor after an
// ErrOutOfMemory. A read of mapped weights whose file was truncated
// after Load, in planning or in the Run, fails the Run
// (graph.ErrMappedFileChanged) instead of the process.
func runOn[T any](s *Session, call *callShape, only []string, do func(*backend.Executor) (T, error)) (out T, err error) {
	fault := graph.CatchFaults(func() error {
		out, err = runExecutor(s, call, only, do)
		return nil
	})
	if fault != nil {
		var zero T
		return zero, fmt.Errorf("onnxvk: model %q: %w", s.model.Name, fault)
	}
	return out, err
}

// runExecutor is runOn without the catching of faults.
func runExecutor[T any](s *Session, call *callShape, only []string, do func(*backend.Executor) (T, error)) (T, error) {
	var zero T
	out, err := useExecutor(s, call, only, false, false, do)
	if err != nil && errors.Is(err, backend.ErrSizesRefused) {
		out, err = useExecutor(s, call, only, false, true, do)
	}
	if err != nil && s.opts.cpuFallback && errors.Is(err, ErrOutOfMemory) {
		out, err = useExecutor(s, call, only, true, false, do)
	}
	if err != nil {
		return zero, fmt.Errorf("onnxvk: model %q: %w", s.model.Name, err)
	}
	return out, nil
}

// useExecutor runs do on the cached executor (see Session.executor),
// which stays in use, and so keeps its device memory, until do returns.
func useExecutor[T any](s *Session, call *callShape, only []string, cpuOnly, concrete bool, do func(*backend.Executor) (T, error)) (T, error) {
	e, err := s.executor(call, only, cpuOnly, concrete)
	if err != nil {
		var zero T
		return zero, err
	}
	defer s.done(e)
	return do(e.ex)
}

// checkInputs validates inputs against the model's declared inputs and
// returns their types as the plan cache sees them.
func (s *Session) checkInputs(inputs map[string]graph.Value) (*callShape, error) {
	byName := make(map[string]bool, len(s.inputs))
	for _, in := range s.inputs {
		byName[in.Name] = true
	}
	for name := range inputs {
		if !byName[name] {
			return nil, fmt.Errorf("onnxvk: model %q: input %q: %w (the model takes %s)", s.model.Name, name, ErrUnknownInput, s.inputNames())
		}
	}
	var key, fixed strings.Builder
	types := make(map[string]*graph.Type, len(inputs))
	symbols := map[string]int64{}
	call := &callShape{types: types, dims: map[string]int64{}}
	for i, in := range s.inputs {
		v, ok := inputs[in.Name]
		if !ok {
			if !in.Optional {
				return nil, fmt.Errorf("onnxvk: model %q: input %q: %w", s.model.Name, in.Name, ErrMissingInput)
			}
			continue
		}
		if v == nil {
			return nil, fmt.Errorf("onnxvk: model %q: input %q is nil: %w", s.model.Name, in.Name, ErrInputMismatch)
		}
		t := v.ValueType()
		decl := s.model.Graph.Inputs[i].Type
		if err := matchType(decl, t, symbols); err != nil {
			return nil, fmt.Errorf("onnxvk: model %q: input %q: %w: %v", s.model.Name, in.Name, ErrInputMismatch, err)
		}
		types[in.Name] = t
		fmt.Fprintf(&key, "%s=%s;", in.Name, t)
		s.addVariable(call, &fixed, in.Name, decl, t)
	}
	call.key, call.fixed = key.String(), fixed.String()
	return call, nil
}

// addVariable adds the input named in, declared of type want and given
// of type t, to call: the sizes of its variable dimensions to call's dims
// (unless the session plans every shape on its own), the rest of its type
// to fixed.
func (s *Session) addVariable(call *callShape, fixed *strings.Builder, in string, want, t *graph.Type) {
	if s.opts.concrete || want == nil || want.Kind != graph.TensorKind || want.Shape == nil || t.Kind != graph.TensorKind {
		fmt.Fprintf(fixed, "%s=%s;", in, t)
		return
	}
	fmt.Fprintf(fixed, "%s=%s[", in, t.Elem)
	for i, d := range want.Shape {
		if d.Known() {
			fmt.Fprintf(fixed, "%d,", t.Shape[i].Value)
			continue
		}
		name := d.Param
		if name == "" {
			// No parameter name holds a NUL byte.
			name = fmt.Sprintf("%s\x00%d", in, i)
		}
		call.dims[name] = t.Shape[i].Value
		call.vars = append(call.vars, varDim{input: in, axis: i, name: name, param: d.Param})
		fmt.Fprintf(fixed, "%q,", name)
	}
	fixed.WriteString("];")
}

func (s *Session) inputNames() string {
	names := make([]string, len(s.inputs))
	for i, in := range s.inputs {
		names[i] = fmt.Sprintf("%q", in.Name)
	}
	return strings.Join(names, ", ")
}

// matchType checks a concrete input type against the declared one; symbols
// records the size bound to each symbolic dimension across inputs.
func matchType(want, got *graph.Type, symbols map[string]int64) error {
	if want == nil || want.Kind == graph.UnknownKind {
		return nil
	}
	if want.Kind != got.Kind {
		return fmt.Errorf("got a %s, the model declares %s", got, want)
	}
	if want.Kind != graph.TensorKind {
		return nil
	}
	if want.Elem != graph.Undefined && want.Elem != got.Elem {
		return fmt.Errorf("element type %s, the model declares %s", got.Elem, want.Elem)
	}
	if want.Shape == nil {
		return nil
	}
	if len(want.Shape) != len(got.Shape) {
		return fmt.Errorf("shape %v has rank %d, the model declares %v", got.Shape, len(got.Shape), want.Shape)
	}
	for i, d := range want.Shape {
		size := got.Shape[i].Value
		switch {
		case d.Known() && d.Value != size:
			return fmt.Errorf("shape %v: dimension %d is %d, the model declares %v", got.Shape, i, size, want.Shape)
		case d.Param != "":
			if prev, ok := symbols[d.Param]; ok && prev != size {
				return fmt.Errorf("shape %v: dimension %d (%s) is %d, but %s is %d in another input", got.Shape, i, d.Param, size, d.Param, prev)
			}
			symbols[d.Param] = size
		}
	}
	return nil
}

// executor returns the cached executor that serves a call's input types,
// planning and compiling one on first use, in use until s.done is called
// with it. A new plan serves a shape class when a cached one differs from
// the call in one variable size (planCache.class), and falls back to a
// concrete plan when planning the class fails. With cpuOnly set, or when
// compiling for the GPU runs out of memory under WithCPUFallbackOnOOM, it
// plans for the CPU alone and caches that plan instead. With concrete set
// (a class plan's device refused the call's sizes), it serves the call
// with a concrete plan, which places each node for those sizes and which
// later calls of those sizes then get.
func (s *Session) executor(call *callShape, only []string, cpuOnly, concrete bool) (*cachedPlan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sym []string
	e := s.plans.find(call)
	if e != nil && concrete && len(e.sym) > 0 {
		s.plans.done(e)
		e = nil
	}
	switch {
	case e != nil:
		if !cpuOnly {
			return e, nil
		}
		sym = e.sym
		s.plans.done(e)
	case !concrete:
		sym = s.plans.class(call)
	}
	ex, err := s.compileFallback(call.classTypes(sym), only, cpuOnly)
	if err != nil && len(sym) > 0 {
		if s.plans.refused == nil || len(s.plans.refused) >= maxRefused {
			s.plans.refused = map[string]bool{}
		}
		s.plans.refused[call.classKey(sym)] = true
		sym = nil
		ex, err = s.compileFallback(call.types, only, cpuOnly)
	}
	if err != nil {
		return nil, err
	}
	return s.plans.add(call, sym, ex), nil
}

// compileFallback is compile, on the CPU alone when compiling for the GPU
// runs out of memory under WithCPUFallbackOnOOM.
func (s *Session) compileFallback(types map[string]*graph.Type, only []string, cpuOnly bool) (*backend.Executor, error) {
	ex, err := s.compile(types, only, cpuOnly)
	if err != nil && !cpuOnly && s.opts.cpuFallback && errors.Is(err, ErrOutOfMemory) {
		ex, err = s.compile(types, only, true)
	}
	return ex, err
}

// PlanStats returns the counts of the session's plans: those compiled
// since it opened, and those cached now with the memory they hold.
func (s *Session) PlanStats() PlanStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.plans.stats
	st.Cached, st.CachedBytes = len(s.plans.plans), s.plans.bytes
	return st
}

// done ends a use of e that s.executor began.
func (s *Session) done(e *cachedPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plans.done(e)
}

// compile plans the model for the input types on the session's devices,
// or on its CPU alone, and compiles the plan.
func (s *Session) compile(types map[string]*graph.Type, only []string, cpuOnly bool) (*backend.Executor, error) {
	opts, devices := s.planOptions(types, cpuOnly)
	opts.Outputs = only
	p, err := planner.New(s.model, opts)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	ex, err := backend.NewExecutor(p, devices)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: model %q: %w", s.model.Name, err)
	}
	return ex, nil
}

// plan returns a plan of the session's model for the given input types
// (inputs not listed keep their declared types), within a call in
// progress.
func (s *Session) plan(inputs map[string]*graph.Type) (*planner.Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	opts, _ := s.planOptions(inputs, false)
	return planner.New(s.model, opts)
}
