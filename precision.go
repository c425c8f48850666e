package onnxvk

import (
	"strings"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
)

// WithFP16 turns on the fp16 precision mode where the GPU has 16-bit
// storage: the constant weights of MatMul, Gemm, FusedMatMul, Conv,
// FusedConv and ConvTranspose are kept on the GPU as fp16 (half the memory
// and bandwidth) and widened to fp32 as the kernels read them, which
// accumulate in fp32. Activations, biases, runtime inputs and every other
// op stay fp32, and so does the CPU. Results differ from fp32 by the
// rounding of the weights, within each op's fp16 tolerance (see
// ops.Tolerance.HalfWeights). A GPU without 16-bit storage runs fp32;
// Precision says which mode the session got, and why.
func WithFP16() Option { return func(o *options) { o.fp16 = true } }

// WithVulkanOptions passes opts to vulkan.Open for each Vulkan device the
// session opens, after the one WithFP16 adds: vulkan.WithSchedule, for
// one, forces kernel schedules (tests, timings).
func WithVulkanOptions(opts ...vulkan.OpenOption) Option {
	return func(o *options) { o.vulkan = append(o.vulkan, opts...) }
}

// vulkanOptions returns the options the session opens its Vulkan device
// with.
func (o options) vulkanOptions() []vulkan.OpenOption {
	if o.fp16 {
		return append([]vulkan.OpenOption{vulkan.WithFP16()}, o.vulkan...)
	}
	return o.vulkan
}

// Precision describes the arithmetic of the session's kernels: "fp32";
// under WithFP16, "fp16 weights on DEVICE" and what it covers when a
// device runs the fp16 mode, or "fp32 (fp16 requested: ...)" with the
// reason it does not.
func (s *Session) Precision() string {
	if !s.opts.fp16 {
		return "fp32"
	}
	var reasons []string
	for _, d := range s.devices {
		h, ok := d.(interface{ FP16() (bool, string) })
		if !ok {
			continue
		}
		on, reason := h.FP16()
		if on {
			return "fp16 weights on " + d.Name() + " (MatMul, Gemm, FusedMatMul, Conv, FusedConv, ConvTranspose); fp32 activations and accumulation"
		}
		reasons = append(reasons, reason)
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "no GPU runs this session, and the CPU runs fp32")
	}
	return "fp32 (fp16 requested: " + strings.Join(reasons, "; ") + ")"
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
