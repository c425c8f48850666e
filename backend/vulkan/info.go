package vulkan

import (
	"fmt"
	"unsafe"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
)

// Info describes one Vulkan physical device.
type Info struct {
	// Index is the device's position in the loader's enumeration: the N of
	// "vulkan:N".
	Index int
	Name  string
	// Type is "discrete", "integrated", "virtual", "cpu" or "other".
	Type string
	// Driver and DriverInfo are the driver's name and version text.
	Driver, DriverInfo string
	// UUID is the device's UUID (VkPhysicalDeviceIDProperties.deviceUUID),
	// the same across processes and driver instances:
	// 8-4-4-4-12 hexadecimal digits.
	UUID string
	// APIVersion is the Vulkan version the device supports (major.minor.patch).
	APIVersion string
	Heaps      []Heap
	// SubgroupSize is the default subgroup (warp, wave) width.
	SubgroupSize uint32
	// SubgroupArithmetic reports the basic and arithmetic subgroup
	// operations in compute shaders: the row kernels (Softmax,
	// LayerNormalization, the Reduce ops, ArgMax and ArgMin) then reduce
	// within each subgroup before combining the subgroups' partial
	// results, rather than in a shared-memory tree (see Schedule.Rows).
	SubgroupArithmetic bool
	// SubgroupShuffle reports the basic and shuffle subgroup operations
	// in compute shaders: flashattn.comp's GPU configuration spreads a
	// score's dot product over a few lanes and adds their partial sums by
	// shuffles (see Schedule.Attention).
	SubgroupShuffle bool
	// Float16, Int8 and Int16 report shader arithmetic on those types;
	// Storage16Bit and Storage8Bit report 16- and 8-bit values in storage
	// buffers.
	Float16, Int8, Int16, Storage16Bit, Storage8Bit bool
	// CooperativeMatrix reports VK_KHR_cooperative_matrix or
	// VK_NV_cooperative_matrix (extension presence only).
	CooperativeMatrix bool
	// MatrixUnit is the shape, M, N and K, of the fp16 products with
	// fp32 sums that the device's matrix units take from a subgroup
	// (VK_KHR_cooperative_matrix with its feature, the Vulkan memory model,
	// shaderFloat16 and VK_EXT_subgroup_size_control's full subgroups;
	// 16×16×16 where offered): matmul.comp's tiled
	// schedule multiplies float16 products on them (matmul_f16_cm.spv,
	// see Schedule.MatMul). Zero where the device has none.
	MatrixUnit [3]uint32
	// IntegerDotProduct reports VK_KHR_shader_integer_dot_product with
	// its shaderIntegerDotProduct feature: MatMulInteger then runs on the
	// packed 4×8-bit dot product (integer_dot.spv).
	IntegerDotProduct bool
	// Timestamps reports timestamp queries on the compute queue;
	// TimestampPeriod is the nanoseconds per tick and TimestampBits the
	// number of valid low bits of a timestamp.
	Timestamps      bool
	TimestampPeriod float32
	TimestampBits   uint32
	// UnifiedMemory reports a memory type that is device-local,
	// host-visible, coherent and cached (an integrated GPU, lavapipe):
	// the backend then reads and writes a Run's inputs and outputs in
	// device memory through its mapping. Elsewhere they go through a
	// staging buffer in host memory, copied by the Run's command buffer;
	// a device-local window the host can map but not cache (the BAR) is
	// never used for them.
	UnifiedMemory bool

	physical    uintptr
	queueFamily uint32
	limits      vk.PhysicalDeviceLimits
	memory      vk.PhysicalDeviceMemoryProperties
	// cacheHeader is what the device's pipeline cache data starts with;
	// with driverVersion it names the device's pipeline cache file.
	cacheHeader   vk.PipelineCacheHeaderVersionOne
	driverVersion uint32
}

// Heap is one memory heap of a device.
type Heap struct {
	Size        uint64
	DeviceLocal bool
}

var typeRank = map[string]int{"discrete": 0, "integrated": 1, "virtual": 2, "cpu": 3, "other": 4}

// Devices lists the Vulkan devices that have a compute queue. It wraps
// backend.ErrDeviceUnavailable when there is no loader or no driver.
func Devices() ([]Info, error) {
	inst, err := acquireInstance()
	if err != nil {
		return nil, err
	}
	defer releaseInstance()
	return enumerate(inst)
}

// DefaultIndex returns the index in infos of the preferred device:
// discrete before integrated before virtual before CPU, the first of a kind
// winning; -1 when infos is empty.
func DefaultIndex(infos []Info) int {
	best := -1
	for i := range infos {
		if best < 0 || typeRank[infos[i].Type] < typeRank[infos[best].Type] {
			best = i
		}
	}
	return best
}

// AutoIndex returns the index in infos of the device that the "auto"
// device option uses: the default device unless it is a CPU implementation
// (lavapipe, SwiftShader), which the host fallback outruns. The error says
// in one line why there is none; it wraps backend.ErrDeviceUnavailable.
func AutoIndex(infos []Info) (int, error) {
	i := DefaultIndex(infos)
	if i < 0 {
		return -1, fmt.Errorf("vulkan: no device: %w", backend.ErrDeviceUnavailable)
	}
	if infos[i].Type == "cpu" {
		return -1, backend.Unavailable("vulkan: the best device, vulkan:%d (%s), is a CPU implementation, slower than the host fallback; choose it with --device vulkan",
			infos[i].Index, infos[i].Name)
	}
	return i, nil
}

func enumerate(inst uintptr) ([]Info, error) {
	pds, err := vk.EnumeratePhysicalDevices(inst)
	if err != nil {
		return nil, fmt.Errorf("vulkan: vkEnumeratePhysicalDevices: %w", err)
	}
	var out []Info
	for i, pd := range pds {
		info, ok, err := describe(inst, i, pd)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, info)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("vulkan: no device with a compute queue (%d physical devices): %w", len(pds), backend.ErrDeviceUnavailable)
	}
	return out, nil
}

// describe queries one physical device of the instance inst; ok is false
// when it has no compute queue.
func describe(inst uintptr, index int, pd uintptr) (Info, bool, error) {
	info := Info{Index: index, physical: pd}
	families := vk.GetPhysicalDeviceQueueFamilyProperties(pd)
	found := false
	for i, f := range families {
		if f.QueueFlags&vk.QueueComputeBit != 0 {
			info.queueFamily, found = uint32(i), true
			info.Timestamps, info.TimestampBits = f.TimestampValidBits > 0, f.TimestampValidBits
			break
		}
	}
	if !found {
		return info, false, nil
	}
	id := &vk.PhysicalDeviceIDProperties{SType: vk.StructureTypePhysicalDeviceIDProperties}
	driver := &vk.PhysicalDeviceDriverProperties{SType: vk.StructureTypePhysicalDeviceDriverProperties, PNext: unsafe.Pointer(id)}
	subgroup := &vk.PhysicalDeviceSubgroupProperties{SType: vk.StructureTypePhysicalDeviceSubgroupProperties, PNext: unsafe.Pointer(driver)}
	props := &vk.PhysicalDeviceProperties2{SType: vk.StructureTypePhysicalDeviceProperties2, PNext: unsafe.Pointer(subgroup)}
	vk.GetPhysicalDeviceProperties2(pd, props)
	p := &props.Properties
	info.Name = vk.GoString(p.DeviceName[:])
	info.UUID = formatUUID(id.DeviceUUID)
	info.Type = map[int32]string{vk.PhysicalDeviceTypeDiscreteGpu: "discrete", vk.PhysicalDeviceTypeIntegratedGpu: "integrated",
		vk.PhysicalDeviceTypeVirtualGpu: "virtual", vk.PhysicalDeviceTypeCpu: "cpu"}[p.DeviceType]
	if info.Type == "" {
		info.Type = "other"
	}
	info.APIVersion = vk.APIVersionString(p.ApiVersion)
	info.Driver, info.DriverInfo = vk.GoString(driver.DriverName[:]), vk.GoString(driver.DriverInfo[:])
	info.SubgroupSize = subgroup.SubgroupSize
	ops := uint32(vk.SubgroupFeatureBasicBit | vk.SubgroupFeatureArithmeticBit)
	info.SubgroupArithmetic = subgroup.SupportedStages&vk.ShaderStageComputeBit != 0 && subgroup.SupportedOperations&ops == ops
	shuffle := uint32(vk.SubgroupFeatureBasicBit | vk.SubgroupFeatureShuffleBit)
	info.SubgroupShuffle = subgroup.SupportedStages&vk.ShaderStageComputeBit != 0 && subgroup.SupportedOperations&shuffle == shuffle
	info.limits = p.Limits
	info.cacheHeader, info.driverVersion = cacheHeader(p), p.DriverVersion
	info.TimestampPeriod = p.Limits.TimestampPeriod
	info.Timestamps = info.Timestamps && p.Limits.TimestampComputeAndGraphics != 0

	coop := &vk.PhysicalDeviceCooperativeMatrixFeaturesKHR{SType: vk.StructureTypePhysicalDeviceCooperativeMatrixFeaturesKHR}
	model := &vk.PhysicalDeviceVulkanMemoryModelFeatures{SType: vk.StructureTypePhysicalDeviceVulkanMemoryModelFeatures}
	full := &vk.PhysicalDeviceSubgroupSizeControlFeatures{SType: vk.StructureTypePhysicalDeviceSubgroupSizeControlFeatures}
	dot := &vk.PhysicalDeviceShaderIntegerDotProductFeatures{SType: vk.StructureTypePhysicalDeviceShaderIntegerDotProductFeatures}
	s8 := &vk.PhysicalDevice8BitStorageFeatures{SType: vk.StructureTypePhysicalDevice8bitStorageFeatures, PNext: unsafe.Pointer(dot)}
	s16 := &vk.PhysicalDevice16BitStorageFeatures{SType: vk.StructureTypePhysicalDevice16bitStorageFeatures, PNext: unsafe.Pointer(s8)}
	f16 := &vk.PhysicalDeviceShaderFloat16Int8Features{SType: vk.StructureTypePhysicalDeviceShaderFloat16Int8Features, PNext: unsafe.Pointer(s16)}
	feats := &vk.PhysicalDeviceFeatures2{SType: vk.StructureTypePhysicalDeviceFeatures2, PNext: unsafe.Pointer(f16)}
	vk.GetPhysicalDeviceFeatures2(pd, feats)
	info.Float16, info.Int8 = f16.ShaderFloat16 != 0, f16.ShaderInt8 != 0
	info.Int16 = feats.Features.ShaderInt16 != 0
	info.Storage16Bit, info.Storage8Bit = s16.StorageBuffer16BitAccess != 0, s8.StorageBuffer8BitAccess != 0

	exts, err := vk.EnumerateDeviceExtensionProperties(pd)
	if err != nil {
		return info, false, fmt.Errorf("vulkan: vkEnumerateDeviceExtensionProperties: %w", err)
	}
	khrMatrix, sizeControl := false, false
	for i := range exts {
		switch vk.GoString(exts[i].ExtensionName[:]) {
		case matrixExtension:
			info.CooperativeMatrix, khrMatrix = true, true
		case sizeControlExtension:
			sizeControl = true
		case "VK_NV_cooperative_matrix":
			info.CooperativeMatrix = true
		case dotExtension:
			info.IntegerDotProduct = dot.ShaderIntegerDotProduct != 0
		}
	}
	// The features of extensions the device lacks are not queried: the
	// structs chained for them stay zero where the driver ignores them.
	if khrMatrix && sizeControl && p.ApiVersion >= vk.MakeAPIVersion(1, 2, 0) {
		coop.PNext = feats.PNext
		model.PNext = unsafe.Pointer(coop)
		full.PNext = unsafe.Pointer(model)
		feats.PNext = unsafe.Pointer(full)
		vk.GetPhysicalDeviceFeatures2(pd, feats)
		if coop.CooperativeMatrix != 0 && model.VulkanMemoryModel != 0 && full.ComputeFullSubgroups != 0 && info.Float16 && info.Storage16Bit {
			shapes, err := vk.GetPhysicalDeviceCooperativeMatrixPropertiesKHR(vk.GetInstanceProcAddr(inst, vk.Cstr("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")), pd)
			if err != nil {
				return info, false, fmt.Errorf("vulkan: vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR (%s): %w", info.Name, err)
			}
			info.MatrixUnit = matrixUnit(shapes)
		}
	}

	vk.GetPhysicalDeviceMemoryProperties(pd, &info.memory)
	m := &info.memory
	for _, h := range m.MemoryHeaps[:m.MemoryHeapCount] {
		info.Heaps = append(info.Heaps, Heap{Size: h.Size, DeviceLocal: h.Flags&vk.MemoryHeapDeviceLocalBit != 0})
	}
	unified := uint32(vk.MemoryPropertyDeviceLocalBit | vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit | vk.MemoryPropertyHostCachedBit)
	for _, t := range m.MemoryTypes[:m.MemoryTypeCount] {
		if t.PropertyFlags&unified == unified {
			info.UnifiedMemory = true
		}
	}
	return info, true, nil
}

// matrixExtension is the device extension of the matrix units, and
// sizeControlExtension that of full subgroups, which a shader of SPIR-V
// before 1.6 that uses them must be created with (the instance asks for
// Vulkan 1.2, where both are extensions).
const (
	matrixExtension      = "VK_KHR_cooperative_matrix"
	sizeControlExtension = "VK_EXT_subgroup_size_control"
)

// matrixUnit returns the shape, among those a device lists, that
// matmul_f16_cm.spv multiplies with: fp16 a and b, fp32 sums and result,
// subgroup scope, each side 8, 16 or 32 (the shaders stage rows in runs
// of 8 and split tiles among invocations by powers of two); 16×16×16
// where listed, else the first such. It is zero where none fits.
func matrixUnit(shapes []vk.CooperativeMatrixPropertiesKHR) [3]uint32 {
	var unit [3]uint32
	for _, s := range shapes {
		if s.AType != vk.ComponentTypeFloat16KHR || s.BType != vk.ComponentTypeFloat16KHR || s.CType != vk.ComponentTypeFloat32KHR ||
			s.ResultType != vk.ComponentTypeFloat32KHR || s.Scope != vk.ScopeSubgroupKHR || s.SaturatingAccumulation != 0 {
			continue
		}
		fits := true
		for _, d := range []uint32{s.MSize, s.NSize, s.KSize} {
			fits = fits && (d == 8 || d == 16 || d == 32)
		}
		switch {
		case !fits:
		case s.MSize == 16 && s.NSize == 16 && s.KSize == 16:
			return [3]uint32{16, 16, 16}
		case unit[0] == 0:
			unit = [3]uint32{s.MSize, s.NSize, s.KSize}
		}
	}
	return unit
}

// formatUUID writes a UUID as 8-4-4-4-12 lowercase hexadecimal digits.
func formatUUID(u [16]uint8) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
