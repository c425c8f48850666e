package vulkan

// Float16 on the GPU comes in two forms.
//
// Float16 tensors: on a device with 16-bit storage (storageBuffer16BitAccess,
// VK_KHR_16bit_storage, core in Vulkan 1.1), which Open enables wherever the
// device has it, a node whose float tensors are float16 runs on the variant
// of its shader compiled with HALF (NAME_f16.spv, see shaders/half.glsl): its
// tensors are stored as fp16 and widened to fp32 as they are read, so
// products, sums, LayerNorm's statistics and Softmax's maximum and sum are
// computed in fp32 and only the results are rounded to fp16. Data movement
// runs on the same variants with 16-bit words, for any 2-byte element type.
// A device without 16-bit storage declines float16 nodes, and says why
// (Decline).
//
// The fp16 weight mode (WithFP16) of float32 models: the constant weights
// of the matrix products (MatMul, Gemm, FusedMatMul) and convolutions
// (Conv, FusedConv, ConvTranspose) are uploaded as fp16, half the device
// memory and bandwidth of fp32, and read by shader variants compiled from
// the same sources with HALF_WEIGHTS (matmul_f16w.spv, conv_f16w.spv),
// which widen each weight to fp32 and accumulate in fp32. Activations,
// biases, runtime inputs and every other kernel stay fp32, so a result
// differs from fp32 only by the rounding of the weights to fp16: at most
// ops.HalfWeightError times the sum over the products of |x|·|w|
// (ops.Tolerance.HalfWeights).

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// OpenOption configures Open.
type OpenOption func(*openConfig)

type openConfig struct {
	// fp16 asks for the fp16 weight mode.
	fp16 bool
	// schedule is WithSchedule's.
	schedule Schedule
	// noIntegerDot keeps the integer dot product off (integer.comp's
	// plain path everywhere), for the tests of that path.
	noIntegerDot bool
	// staging is WithStaging's.
	staging bool
}

// WithFP16 asks Open for the fp16 weight mode: constant weights of matrix
// products and convolutions stored and read as fp16, accumulation and
// activations in fp32. A device without 16-bit storage opens in fp32 and
// says why in FP16.
func WithFP16() OpenOption { return func(c *openConfig) { c.fp16 = true } }

// halfMode is the state of a device's float16 support.
type halfMode struct {
	// storage tells that 16-bit storage is enabled: float16 tensors run
	// on the HALF shader variants.
	storage bool
	// on tells that constant weights are read as fp16.
	on bool
	// reason says why a requested mode is off; "" when it is on or was
	// not requested.
	reason string
	// weights holds the fp16 copies of constant weights (in the fp16
	// mode, or of float16 values, see useHalfWeights) where storage is
	// set. The device's mu guards it.
	weights map[*graph.Tensor]weightRef
}

// storage16 reports whether a device can read fp16 from storage buffers;
// tests replace it to open a device as if it had no 16-bit storage.
var storage16 = func(info Info) bool { return info.Storage16Bit }

// halfExtension is the device extension of 16-bit storage, enabled where
// the device lists it (its feature is core from Vulkan 1.1).
const halfExtension = "VK_KHR_16bit_storage"

// enableHalf chains the 16-bit storage feature (and its extension, where
// listed) into dci where the device described by info has it, and decides
// the fp16 weight mode under cfg; pin keeps the chained memory in place
// until dci is used.
func enableHalf(cfg openConfig, info Info, dci *vk.DeviceCreateInfo, pin *runtime.Pinner) (halfMode, error) {
	if !storage16(info) {
		if !cfg.fp16 {
			return halfMode{}, nil
		}
		return halfMode{reason: fmt.Sprintf("vulkan:%d (%s) lacks 16-bit storage (storageBuffer16BitAccess), so it runs fp32", info.Index, info.Name)}, nil
	}
	s16 := &vk.PhysicalDevice16BitStorageFeatures{SType: vk.StructureTypePhysicalDevice16bitStorageFeatures,
		PNext: dci.PNext, StorageBuffer16BitAccess: 1}
	pin.Pin(s16)
	dci.PNext = unsafe.Pointer(s16)
	exts, err := vk.EnumerateDeviceExtensionProperties(info.physical)
	if err != nil {
		return halfMode{}, fmt.Errorf("vulkan: vkEnumerateDeviceExtensionProperties (%s): %w", info.Name, err)
	}
	for i := range exts {
		if vk.GoString(exts[i].ExtensionName[:]) == halfExtension {
			enableExtension(dci, pin, halfExtension)
		}
	}
	if !cfg.fp16 {
		return halfMode{storage: true, weights: map[*graph.Tensor]weightRef{}}, nil
	}
	return halfMode{storage: true, on: true, weights: map[*graph.Tensor]weightRef{}}, nil
}

// enableExtension adds the device extension name to those dci enables;
// pin keeps the names in place until dci is used.
func enableExtension(dci *vk.DeviceCreateInfo, pin *runtime.Pinner, name string) {
	c := vk.Cstr(name)
	pin.Pin(&c[0])
	names := []unsafe.Pointer{unsafe.Pointer(&c[0])}
	if n := int(dci.EnabledExtensionCount); n > 0 {
		names = append(unsafe.Slice((*unsafe.Pointer)(dci.PpEnabledExtensionNames), n), names...)
	}
	pin.Pin(&names[0])
	dci.EnabledExtensionCount, dci.PpEnabledExtensionNames = uint32(len(names)), unsafe.Pointer(&names[0])
}

// dotExtension is the device extension of the integer dot product
// instructions (core from Vulkan 1.3; the instance asks for 1.2).
const dotExtension = "VK_KHR_shader_integer_dot_product"

// enableIntegerDot chains the integer dot product feature and its
// extension into dci where the device described by info has them and cfg
// does not turn them off; it reports whether it did.
func enableIntegerDot(cfg openConfig, info Info, dci *vk.DeviceCreateInfo, pin *runtime.Pinner) bool {
	if !info.IntegerDotProduct || cfg.noIntegerDot {
		return false
	}
	f := &vk.PhysicalDeviceShaderIntegerDotProductFeatures{SType: vk.StructureTypePhysicalDeviceShaderIntegerDotProductFeatures,
		PNext: dci.PNext, ShaderIntegerDotProduct: 1}
	pin.Pin(f)
	dci.PNext = unsafe.Pointer(f)
	enableExtension(dci, pin, dotExtension)
	return true
}

// FP16 reports the fp16 weight mode (see WithFP16): on when the device
// reads the constant weights of matrix products and convolutions as fp16;
// otherwise reason says why a requested mode is off, and is "" when the
// mode was not requested.
func (d *Device) FP16() (on bool, reason string) { return d.half.on, d.half.reason }

// halfVariants maps each shader that has an fp16-weight variant to the
// variant and the binding the variant reads as fp16.
var halfVariants = map[string]struct {
	shader  string
	binding int
}{
	"matmul":   {"matmul_f16w", 1},
	"conv":     {"conv_f16w", 1},
	"convgemm": {"convgemm_f16w", 1},
	"dwconv":   {"dwconv_f16w", 1},
}

// useHalfWeights switches l to its shader's fp16-weight variant when the
// variant's fp16 binding holds a constant float32 input and the device is
// in the fp16 mode, or has 16-bit storage and the constant holds float16
// values (ops.FromFloat16: a mixed-precision model's weight, widened at
// load), which fp16 then holds exactly in half the memory. Every binding
// of that input then reads it as fp16 (see launch.halfInputs). Only l
// itself switches, so it does not when a dispatch of l.then binds that
// input too.
func useHalfWeights(q *query, l *launch) {
	v, ok := halfVariants[l.shader]
	if !ok {
		return
	}
	s := l.bindings[v.binding]
	if s.out || s.k < 0 || q.consts[s.k] == nil || q.elems[s.k] != graph.Float ||
		!q.halfWeights && !(q.half16 && ops.FromFloat16(q.consts[s.k])) {
		return
	}
	for _, part := range l.then {
		if slices.Contains(part.bindings, s) {
			return
		}
	}
	l.shader, l.halfInputs = v.shader, []int{s.k}
}

// halfBytes returns the fp16 encoding of v, little endian: each value
// rounded to the nearest fp16, ties to even, finite values beyond fp16's
// range saturated at ±65504, infinities and NaNs kept.
func halfBytes(v []float32) []byte {
	out := make([]byte, 2*len(v))
	for i, f := range v {
		if !math.IsInf(float64(f), 0) {
			f = min(max(f, -65504), 65504)
		}
		binary.LittleEndian.PutUint16(out[2*i:], float16.Fromfloat32(f).Bits())
	}
	return out
}

// halfInput tells whether the kernel reads input k of its node as fp16.
func (l *launch) halfInput(k int) bool { return slices.Contains(l.halfInputs, k) }

// halfShaders lists the shaders compiled with HALF as NAME_f16.spv (see
// shaders/half.glsl): there the float tensors they bind are float16, and
// the raw elements they move are 16-bit words.
var halfShaders = map[string]bool{
	"unary": true, "binary": true, "clip": true, "matmul": true, "conv": true, "convgemm": true, "dwconv": true, "pool": true,
	"softmax": true, "layernorm": true, "reduce": true, "batchnorm": true, "argmax": true, "cumsum": true,
	"resize": true, "rotary": true, "transpose": true, "copy": true, "gather": true, "gatherelements": true,
	"pad": true, "where": true, "trilu": true, "chain": true, "attention": true, "flashattn": true,
	"tensorscatter": true,
}

// halfInt16 lists the shaders whose HALF variant declares the Int16
// capability (it selects or makes 16-bit integer values), which a device
// without shaderInt16 must not be given.
var halfInt16 = map[string]bool{"where": true, "pad": true, "trilu": true, "gatherelements": true}

// ownHalf lists the shaders that read and write 2-byte elements
// themselves, with no HALF variant: cast.comp and predicate.comp read
// them from 32-bit words.
var ownHalf = map[string]bool{"cast": true, "predicate": true}

// halfSuffix names a shader's HALF variant.
const halfSuffix = "_f16"

// toHalf moves l to the HALF variants of its shaders when the node has
// tensors of 2-byte elements: float16 where the shader computes (its
// float inputs, and outputs of no declared type, become float16), any
// 2-byte type where it moves raw elements. ok is false when the device
// lacks 16-bit storage, a shader has no HALF variant, or the node mixes a
// float16 input with float32 ones (or computes on bfloat16).
func toHalf(q *query, l *launch) (ok bool) {
	half := slices.ContainsFunc(l.outTypes, func(t graph.DType) bool { return t.Size() == 2 })
	for _, part := range l.parts() {
		if ownHalf[part.shader] {
			return true
		}
		for _, s := range part.bindings {
			if !s.out && !s.isParams() && !s.isScratch() && q.elems[s.k].Size() == 2 {
				half = true
			}
		}
	}
	if !half {
		return true
	}
	if !q.half16 {
		return false
	}
	for _, part := range l.parts() {
		if !halfShaders[part.shader] || halfInt16[part.shader] && !q.int16 {
			return false
		}
		for _, s := range part.bindings {
			if !s.out && !s.isParams() && !s.isScratch() && !slices.Contains(l.rawInputs, s.k) && q.elems[s.k] != graph.Float16 {
				return false
			}
		}
	}
	for _, part := range l.parts() {
		part.shader += halfSuffix
	}
	for len(l.outTypes) < len(q.n.Outputs) {
		l.outTypes = append(l.outTypes, graph.Float16)
	}
	return true
}

// Decline says why the device does not run a node of float16 or bfloat16
// tensors when it lacks 16-bit storage; "" otherwise (see
// planner.Decliner).
func (d *Device) Decline(q planner.Query) string {
	if d.half.storage {
		return ""
	}
	for _, t := range q.Inputs {
		if t != nil && (t.Elem == graph.Float16 || t.Elem == graph.BFloat16) {
			return fmt.Sprintf("%s (%s) lacks 16-bit storage (storageBuffer16BitAccess): its kernels cannot read %s tensors", d.name, d.info.Name, t.Elem)
		}
	}
	return ""
}

// Float16 reports whether the device runs float16 tensors (16-bit storage
// enabled) and has float16 shader arithmetic (shaderFloat16), which its
// kernels do not need: they widen float16 to float32 as they read.
func (d *Device) Float16() (storage, arithmetic bool) { return d.half.storage, d.info.Float16 }
