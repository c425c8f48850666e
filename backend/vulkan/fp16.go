package vulkan

// The fp16 weight mode (WithFP16): on a device with 16-bit storage
// (storageBuffer16BitAccess, VK_KHR_16bit_storage, core in Vulkan 1.1) the
// constant weights of the matrix products (MatMul, Gemm, FusedMatMul) and
// convolutions (Conv, FusedConv, ConvTranspose) are uploaded as fp16, half
// the device memory and bandwidth of fp32, and read by shader variants
// compiled from the same sources with HALF_WEIGHTS (matmul_f16w.spv,
// conv_f16w.spv), which widen each weight to fp32 and accumulate in fp32.
// Activations, biases, runtime inputs and every other kernel stay fp32, so
// a result differs from fp32 only by the rounding of the weights to fp16:
// at most ops.HalfWeightError times the sum over the products of |x|·|w|
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
)

// OpenOption configures Open.
type OpenOption func(*openConfig)

type openConfig struct {
	// fp16 asks for the fp16 weight mode.
	fp16 bool
	// schedule is WithSchedule's.
	schedule Schedule
}

// WithFP16 asks Open for the fp16 weight mode: constant weights of matrix
// products and convolutions stored and read as fp16, accumulation and
// activations in fp32. A device without 16-bit storage opens in fp32 and
// says why in FP16.
func WithFP16() OpenOption { return func(c *openConfig) { c.fp16 = true } }

// halfMode is the state of a device's fp16 weight mode.
type halfMode struct {
	// on tells that constant weights are read as fp16.
	on bool
	// reason says why a requested mode is off; "" when it is on or was
	// not requested.
	reason string
	// weights holds the fp16 copies of constant weights. The device's mu
	// guards it.
	weights map[*graph.Tensor]weightRef
}

// storage16 reports whether a device can read fp16 from storage buffers;
// tests replace it to open a device as if it had no 16-bit storage.
var storage16 = func(info Info) bool { return info.Storage16Bit }

// halfExtension is the device extension of 16-bit storage, enabled where
// the device lists it (its feature is core from Vulkan 1.1).
const halfExtension = "VK_KHR_16bit_storage"

// enableHalf decides the fp16 mode of the device described by info under
// cfg and, where it is on, chains the 16-bit storage feature (and its
// extension, where listed) into dci; pin keeps the chained memory in place
// until dci is used.
func enableHalf(cfg openConfig, info Info, dci *vk.DeviceCreateInfo, pin *runtime.Pinner) (halfMode, error) {
	if !cfg.fp16 {
		return halfMode{}, nil
	}
	if !storage16(info) {
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
			name := vk.Cstr(halfExtension)
			names := []unsafe.Pointer{unsafe.Pointer(&name[0])}
			pin.Pin(&name[0])
			pin.Pin(&names[0])
			dci.EnabledExtensionCount, dci.PpEnabledExtensionNames = 1, unsafe.Pointer(&names[0])
		}
	}
	return halfMode{on: true, weights: map[*graph.Tensor]weightRef{}}, nil
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
}

// useHalfWeights switches l to its shader's fp16-weight variant when the
// device is in the fp16 mode and the variant's fp16 binding holds a
// constant float32 input, which every binding of that input then reads as
// fp16 (see launch.halfInputs). Only l itself switches, so it does not
// when a dispatch of l.then binds that input too.
func useHalfWeights(q *query, l *launch) {
	v, ok := halfVariants[l.shader]
	if !ok || !q.halfWeights {
		return
	}
	s := l.bindings[v.binding]
	if s.out || s.k < 0 || q.consts[s.k] == nil || q.elems[s.k] != graph.Float {
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
