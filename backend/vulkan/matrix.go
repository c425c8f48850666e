package vulkan

import (
	"encoding/binary"
	"runtime"
	"unsafe"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
)

// matrixShaders maps the HALF variants whose GEMM has a matrix-unit
// variant (HALF and COOPMAT defined) to it: matmul.comp's tiled schedule
// and convgemm.comp.
var matrixShaders = map[string]string{"matmul" + halfSuffix: "matmul_f16_cm", "convgemm" + halfSuffix: "convgemm_f16_cm"}

// matrixSubgroups is the number of subgroups of a matrix-unit workgroup,
// a 2×2 grid, each computing f×f fragments of the matrix unit's shape
// (the shaders' F, see useMatrixUnits).
const matrixSubgroups = 4

// matrixBigTiles is the fewest 8M × 8N tiles for which a GEMM takes them
// (four fragments a side a subgroup) rather than 4M × 4N: as many
// workgroups as split-K and the gemv schedule aim for on a large GPU.
const matrixBigTiles = 256

// enableMatrixUnits chains the cooperative matrix, Vulkan memory model,
// full subgroups and shaderFloat16 features and their extensions into dci
// where the device described by info has matrix units the shaders take
// (Info.MatrixUnit) and off does not keep them off; it returns the unit's
// shape, zero where it enabled nothing. pin keeps the chained memory in
// place until dci is used.
func enableMatrixUnits(info Info, off bool, dci *vk.DeviceCreateInfo, pin *runtime.Pinner) [3]uint32 {
	if info.MatrixUnit[0] == 0 || off {
		return [3]uint32{}
	}
	coop := &vk.PhysicalDeviceCooperativeMatrixFeaturesKHR{SType: vk.StructureTypePhysicalDeviceCooperativeMatrixFeaturesKHR,
		PNext: dci.PNext, CooperativeMatrix: 1}
	model := &vk.PhysicalDeviceVulkanMemoryModelFeatures{SType: vk.StructureTypePhysicalDeviceVulkanMemoryModelFeatures,
		PNext: unsafe.Pointer(coop), VulkanMemoryModel: 1}
	full := &vk.PhysicalDeviceSubgroupSizeControlFeatures{SType: vk.StructureTypePhysicalDeviceSubgroupSizeControlFeatures,
		PNext: unsafe.Pointer(model), ComputeFullSubgroups: 1}
	f16 := &vk.PhysicalDeviceShaderFloat16Int8Features{SType: vk.StructureTypePhysicalDeviceShaderFloat16Int8Features,
		PNext: unsafe.Pointer(full), ShaderFloat16: 1}
	pin.Pin(coop)
	pin.Pin(model)
	pin.Pin(full)
	pin.Pin(f16)
	dci.PNext = unsafe.Pointer(f16)
	enableExtension(dci, pin, matrixExtension)
	enableExtension(dci, pin, sizeControlExtension)
	return info.MatrixUnit
}

// MatrixUnit returns the shape (M, N, K) of the matrix units the device
// runs float16 products and convolutions on (Info.MatrixUnit, enabled at
// Open unless Schedule.MatrixUnits was "off"); zero where none.
func (d *Device) MatrixUnit() [3]uint32 { return d.matrixUnit }

// fullSubgroups tells the shaders whose pipelines are created with
// VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT, as the
// cooperative matrix operations of SPIR-V before 1.6 require: their
// workgroups are whole subgroups of the device's default size.
func fullSubgroups(shader string) bool {
	for _, s := range matrixShaders {
		if s == shader {
			return true
		}
	}
	return false
}

// matrixShared returns the bytes of shared memory a matrix-unit shader
// uses with f fragments a side a subgroup of the unit shape unit: the
// staged slices of a and b (fp16, rows padded by 8), one fp32 fragment
// per subgroup and convgemm.comp's table of a slice's taps (a uint and an
// ivec3, 20 bytes, a depth).
func matrixShared(unit [3]uint32, f int64) int64 {
	m, n, k := int64(unit[0]), int64(unit[1]), int64(unit[2])
	bm, bn, bk := 2*f*m, 2*f*n, 2*k
	return 2*(bm*(bk+8)+bk*(bn+8)) + 4*matrixSubgroups*m*n + 20*bk
}

// matrixUnitsHeld is the most units of 8 halves of a slice of a or b
// (a convolution's weights) an invocation of a matrix-unit shader holds
// in registers while the slice before it is multiplied (the shaders'
// UMAX), and matrixGathered the most halves of a convolution's gathered
// patch (convgemm.comp's GMAX).
const (
	matrixUnitsHeld = 8
	matrixGathered  = 32
)

// matrixHeld says whether a workgroup of wg invocations of a matrix-unit
// shader with f fragments a side a subgroup of the unit shape unit holds
// each slice in its registers (matrixUnitsHeld, matrixGathered) and, for
// a convolution, whether an invocation's columns fit its four slots
// (convgemm.comp's gather).
func matrixHeld(unit [3]uint32, f, wg int64, conv bool) bool {
	m, n, k := int64(unit[0]), int64(unit[1]), int64(unit[2])
	bm, bn, bk := 2*f*m, 2*f*n, 2*k
	if bm*bk/8 > matrixUnitsHeld*wg {
		return false
	}
	if conv {
		return bk*bn <= matrixGathered*wg && bn <= 4*wg
	}
	return bk*bn/8 <= matrixUnitsHeld*wg
}

// useMatrixUnits moves the float16 GEMMs of matmul.comp's tiled schedule
// and of convgemm.comp (not its split-K reduction) to their matrix-unit
// variants (matrixShaders) where the device has the units enabled: each
// subgroup of four computes f × f fragments of the unit's M × N, a
// workgroup a tile of 2fM × 2fN (output rows by columns, or output
// channels by positions); f is 4 where the GEMM has at least
// matrixBigTiles such tiles and the device the shared memory, else 2,
// unless the schedule forces it (a forced 4 that does not fit takes 2). A
// unit too large for the shared memory at 2, or a device that reports no
// subgroup size, leaves the GEMMs as they are, as does a tile whose
// slices an invocation cannot hold (matrixHeld: subgroups too small for
// the unit).
// It runs after the folds, which leave the products' push constants
// final, and before splitProducts, which splits the products' depth as
// the tiled schedule's; a convolution's split-K is already in its push
// constants, which the variant reads.
func useMatrixUnits(c caps, launches []*launch) {
	unit := c.matrixUnit
	if unit[0] == 0 || c.subgroupSize == 0 || matrixShared(unit, 2) > c.sharedMem {
		return
	}
	wg := matrixSubgroups * c.subgroupSize
	for i, l := range launches {
		if l == nil {
			continue
		}
		shader, ok := matrixShaders[l.shader]
		if !ok || l.shader == "matmul"+halfSuffix && (l.op != 1 || len(l.then) > 0) {
			continue
		}
		word := func(i int) int64 { return int64(binary.LittleEndian.Uint32(l.push[4*i:])) }
		// The GEMM's batches, rows and columns, and its splits.
		batches, rows, cols, splits := word(3), word(0), word(1), int64(1)
		conv := shader == matrixShaders["convgemm"+halfSuffix]
		if conv {
			batches, rows, cols, splits = word(4), word(2), word(6), word(7)
			if l.op&convGemmTransposed != 0 {
				// A GEMM per phase of the strides, over each image's
				// grid of the phase's outputs (see convGemm).
				cols /= word(5)
				for d := range maxSpatial {
					st := word(17 + d)
					batches, cols = batches*st, cols*((word(11+d)+st-1)/st)
				}
			}
		}
		tiles := func(f int64) int64 {
			bm, bn := 2*f*int64(unit[0]), 2*f*int64(unit[1])
			return batches * ((rows + bm - 1) / bm) * ((cols + bn - 1) / bn)
		}
		fits := func(f int64) bool {
			return matrixShared(unit, f) <= c.sharedMem && matrixHeld(unit, f, wg, conv)
		}
		f := int64(2)
		if (c.matrixFragments == 4 || c.matrixFragments == 0 && tiles(4) >= matrixBigTiles) && fits(4) {
			f = 4
		}
		if !fits(f) {
			continue
		}
		units := *l
		units.shader, units.workgroup = shader, wg
		units.specs = []int32{int32(unit[0]), int32(unit[1]), int32(unit[2]), int32(f)}
		units.groups = tiles(f) * splits
		launches[i] = &units
	}
}
