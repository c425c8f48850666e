package onnxvk

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// WithFP16 turns on the float16 mode of float32 models where the GPU runs
// float16 tensors (16-bit storage): after fusion, every node whose op the
// float16 policy allows (ops.HalfRuleOf: products, convolutions,
// elementwise ops, normalizations, Softmax, means, pooling, data
// movement) stores its activations and constants as float16, and its
// kernel widens them to float32 as it reads, so products, sums,
// normalization statistics and Softmax's maximum and sum are computed and
// accumulated in float32 and each result is rounded once to float16. The
// ops the policy keeps float32 (large sums, Pow, Exp, CumSum, any op
// without a rule), graph inputs and outputs and the nodes writing them
// stay float32, with Casts where float32 and float16 values meet. Results
// differ from float32 by those roundings: see Precision for what the
// session got, and why.
func WithFP16() Option { return func(o *options) { o.fp16 = true } }

// WithFP16Weights turns on the fp16 weight mode where the GPU has 16-bit
// storage: the constant weights of MatMul, Gemm, FusedMatMul, Conv,
// FusedConv and ConvTranspose are kept on the GPU as fp16 (half the memory
// and bandwidth) and widened to fp32 as the kernels read them, which
// accumulate in fp32. Activations, biases, runtime inputs and every other
// op stay fp32, and so does the CPU. Results differ from fp32 by the
// rounding of the weights, within each op's fp16 tolerance (see
// ops.Tolerance.HalfWeights). WithFP16 takes precedence.
func WithFP16Weights() Option { return func(o *options) { o.fp16Weights = true } }

// WithVulkanOptions passes opts to vulkan.Open for each Vulkan device the
// session opens, after the one WithFP16Weights adds: vulkan.WithSchedule,
// for one, forces kernel schedules (tests, timings).
func WithVulkanOptions(opts ...vulkan.OpenOption) Option {
	return func(o *options) { o.vulkan = append(o.vulkan, opts...) }
}

// vulkanOptions returns the options the session opens its Vulkan device
// with.
func (o options) vulkanOptions() []vulkan.OpenOption {
	if o.fp16Weights && !o.fp16 {
		return append([]vulkan.OpenOption{vulkan.WithFP16()}, o.vulkan...)
	}
	return o.vulkan
}

// Precision modes (Precision.Mode and Precision.Requested).
const (
	PrecisionFP32        = "fp32"
	PrecisionFP16        = "fp16"
	PrecisionFP16Weights = "fp16-weights"
)

// Precision describes the arithmetic of a session's kernels
// (Session.Precision).
type Precision struct {
	// Requested is the mode asked for: PrecisionFP32, PrecisionFP16
	// (WithFP16) or PrecisionFP16Weights (WithFP16Weights); Mode is the
	// one the session runs.
	Requested, Mode string
	// Device names the device that runs the float16 or fp16 weight mode;
	// "" in fp32.
	Device string
	// Storage16 and ShaderFloat16 report that device's 16-bit storage,
	// which the modes need, and float16 shader arithmetic, which its
	// kernels do not use (they compute in float32) but for the matrix
	// units' products.
	Storage16, ShaderFloat16 bool
	// MatrixUnit, in the float16 mode, is the shape (M, N, K) of the
	// matrix units that device runs the float16 products and
	// convolutions of its GPU schedules on (fp16 products, exact, summed
	// in float32); absent where it has none (vulkan.Info.MatrixUnit).
	MatrixUnit []uint32
	// Reason says why Mode is not Requested; "" when it is.
	Reason string
	// Float32 lists, in the float16 mode, the ops of the model that stay
	// float32 and why, by op name (nodes the planner fuses away, such as
	// a written-out LayerNormalization's Pow, run in their fused node's
	// precision). Graph inputs and outputs and the nodes writing the
	// outputs also stay float32.
	Float32 []OpPrecision
}

// OpPrecision is an op that the float16 mode keeps float32, and why.
type OpPrecision struct {
	Op, Why string
}

// String is Precision in one line: "fp32"; "fp16 on DEVICE (...)", with
// the ops kept float32; "fp16 weights on DEVICE (...)"; or
// "fp32 (fp16 requested: REASON)".
func (p Precision) String() string {
	switch p.Mode {
	case PrecisionFP16:
		s := "fp16 on " + p.Device + " (float16 activations and weights, float32 arithmetic and accumulation)"
		if len(p.MatrixUnit) == 3 {
			s += fmt.Sprintf("; products and convolutions on %d×%d×%d matrix units", p.MatrixUnit[0], p.MatrixUnit[1], p.MatrixUnit[2])
		}
		if len(p.Float32) > 0 {
			ops := make([]string, len(p.Float32))
			for i, o := range p.Float32 {
				ops[i] = o.Op
			}
			s += "; float32: " + strings.Join(ops, ", ")
		}
		return s
	case PrecisionFP16Weights:
		return "fp16 weights on " + p.Device + " (MatMul, Gemm, FusedMatMul, Conv, FusedConv, ConvTranspose); fp32 activations and accumulation"
	}
	if p.Reason != "" {
		return "fp32 (" + p.Requested + " requested: " + p.Reason + ")"
	}
	return "fp32"
}

// Precision says which precision the session's kernels run and why: the
// mode requested (WithFP16, WithFP16Weights), the mode chosen, the
// device running it and its capabilities, and in the float16 mode the ops
// kept float32 with their reasons.
func (s *Session) Precision() Precision { return s.precision }

// choosePrecision decides the session's precision under o on devs, and
// returns the float16 constants of the float16 mode (nil outside it);
// newSession fills in Float32 from its first plan.
func choosePrecision(o options, devs []backend.Device) (Precision, *planner.HalfConstants) {
	p := Precision{Requested: PrecisionFP32, Mode: PrecisionFP32}
	switch {
	case o.fp16:
		p.Requested = PrecisionFP16
	case o.fp16Weights:
		p.Requested = PrecisionFP16Weights
	default:
		return p, nil
	}
	var reasons []string
	for _, d := range devs {
		v, ok := d.(*vulkan.Device)
		if !ok {
			continue
		}
		storage, arith := v.Float16()
		if p.Requested == PrecisionFP16Weights {
			if on, reason := v.FP16(); !on {
				reasons = append(reasons, reason)
				continue
			}
		} else if !storage {
			reasons = append(reasons, fmt.Sprintf("%s (%s) lacks 16-bit storage (storageBuffer16BitAccess), so it runs fp32", v.Name(), v.Info().Name))
			continue
		}
		p.Mode, p.Device, p.Storage16, p.ShaderFloat16 = p.Requested, v.Name(), storage, arith
		if p.Mode != PrecisionFP16 {
			return p, nil
		}
		if unit := v.MatrixUnit(); unit[0] > 0 {
			p.MatrixUnit = unit[:]
		}
		return p, &planner.HalfConstants{}
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "no GPU runs this session, and the CPU runs fp32")
	}
	p.Reason = strings.Join(reasons, "; ")
	return p, nil
}

// float32Ops lists the ops of the float16-mode plan p that still compute
// float32 values from their inputs, and why, by op and reason (Casts,
// which convert, and nodes without inputs, such as Constant, aside).
func float32Ops(p *planner.Plan) []OpPrecision {
	outputs := map[string]bool{}
	for _, o := range p.Graph.Outputs {
		outputs[o.Name] = true
	}
	var out []OpPrecision
	for _, n := range p.Graph.Nodes {
		if n.OpType == "Cast" || !slices.ContainsFunc(n.Inputs, func(name string) bool { return name != "" }) || !slices.ContainsFunc(n.Outputs, func(name string) bool {
			t := p.Graph.TypeOf(name)
			return t != nil && t.Kind == graph.TensorKind && t.Elem == graph.Float
		}) {
			continue
		}
		r := ops.HalfRuleOf(n.Domain, n.OpType)
		why := r.Why
		switch {
		case r.Half && slices.ContainsFunc(n.Outputs, func(name string) bool { return outputs[name] }):
			why = "writes a graph output, which keeps its float32 type"
		case r.Half:
			why = "reads a float type other than float32, or a subgraph reads its output"
		}
		o := OpPrecision{Op: n.OpType, Why: why}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b OpPrecision) int { return strings.Compare(a.Op+a.Why, b.Op+b.Why) })
	return out
}

// DeviceMemoryInUse returns the bytes of GPU memory the session's devices
// hold now: uploaded weights and the buffers of the plans compiled so far.
func (s *Session) DeviceMemoryInUse() int64 {
	var n int64
	for _, d := range s.devices {
		if m, ok := d.(interface{ MemoryInUse() int64 }); ok {
			n += m.MemoryInUse()
		}
	}
	return n
}

// Counters is what the session's devices have done: queue submissions,
// kernel dispatches, and bytes copied between host memory and device
// memory (inputs, outputs, values crossing to or from the CPU, weight
// uploads; staging copies included). The difference of two readings
// around one Run, with no other Run in flight, is that Run's cost.
type Counters struct {
	Submits, Dispatches, HostDeviceBytes int64
}

// Sub returns c minus o: what was done between two readings.
func (c Counters) Sub(o Counters) Counters {
	return Counters{c.Submits - o.Submits, c.Dispatches - o.Dispatches, c.HostDeviceBytes - o.HostDeviceBytes}
}

// Counters returns the running totals of the session's devices since they
// were opened (see Counters). A CPU-only session counts nothing.
func (s *Session) Counters() Counters {
	var c backend.Counters
	for _, d := range s.devices {
		if k, ok := d.(backend.Counting); ok {
			c = c.Add(k.Counters())
		}
	}
	return Counters(c)
}
