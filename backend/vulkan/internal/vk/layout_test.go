package vk

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// layoutTypes lists every struct this package declares.
var layoutTypes = []any{
	ApplicationInfo{},
	InstanceCreateInfo{},
	LayerProperties{},
	ExtensionProperties{},
	DebugUtilsMessengerCreateInfoEXT{},
	DebugUtilsMessengerCallbackDataEXT{},
	ValidationFeaturesEXT{},
	PhysicalDeviceLimits{},
	PhysicalDeviceSparseProperties{},
	PhysicalDeviceProperties{},
	PhysicalDeviceProperties2{},
	PhysicalDeviceSubgroupProperties{},
	PhysicalDeviceDriverProperties{},
	PhysicalDeviceIDProperties{},
	ConformanceVersion{},
	PhysicalDeviceFeatures{},
	PhysicalDeviceFeatures2{},
	PhysicalDeviceShaderFloat16Int8Features{},
	PhysicalDevice16BitStorageFeatures{},
	PhysicalDevice8BitStorageFeatures{},
	PhysicalDeviceShaderIntegerDotProductFeatures{},
	PhysicalDeviceVulkanMemoryModelFeatures{},
	PhysicalDeviceSubgroupSizeControlFeatures{},
	PhysicalDeviceMemoryProperties{},
	MemoryType{},
	MemoryHeap{},
	QueueFamilyProperties{},
	Extent3D{},
	DeviceQueueCreateInfo{},
	DeviceCreateInfo{},
	BufferCreateInfo{},
	MemoryRequirements{},
	MemoryAllocateInfo{},
	DescriptorSetLayoutBinding{},
	DescriptorSetLayoutCreateInfo{},
	DescriptorPoolSize{},
	DescriptorPoolCreateInfo{},
	DescriptorSetAllocateInfo{},
	DescriptorBufferInfo{},
	WriteDescriptorSet{},
	PushConstantRange{},
	PipelineLayoutCreateInfo{},
	ShaderModuleCreateInfo{},
	SpecializationMapEntry{},
	SpecializationInfo{},
	PipelineShaderStageCreateInfo{},
	ComputePipelineCreateInfo{},
	PipelineCacheCreateInfo{},
	PipelineCacheHeaderVersionOne{},
	CommandPoolCreateInfo{},
	CommandBufferAllocateInfo{},
	CommandBufferBeginInfo{},
	MemoryBarrier{},
	BufferCopy{},
	SubmitInfo{},
	FenceCreateInfo{},
	QueryPoolCreateInfo{},
}

// layoutConsts lists every constant with its C name.
var layoutConsts = []struct {
	c string
	v int64
}{
	{"VK_SUCCESS", Success},
	{"VK_ERROR_OUT_OF_HOST_MEMORY", ErrorOutOfHostMemory},
	{"VK_ERROR_OUT_OF_DEVICE_MEMORY", ErrorOutOfDeviceMemory},
	{"VK_ERROR_DEVICE_LOST", ErrorDeviceLost},
	{"VK_ERROR_INCOMPATIBLE_DRIVER", ErrorIncompatibleDriver},
	{"VK_STRUCTURE_TYPE_APPLICATION_INFO", StructureTypeApplicationInfo},
	{"VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO", StructureTypeInstanceCreateInfo},
	{"VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT", StructureTypeDebugUtilsMessengerCreateInfoEXT},
	{"VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT", StructureTypeValidationFeaturesEXT},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2", StructureTypePhysicalDeviceProperties2},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES", StructureTypePhysicalDeviceSubgroupProperties},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES", StructureTypePhysicalDeviceDriverProperties},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES", StructureTypePhysicalDeviceIDProperties},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2", StructureTypePhysicalDeviceFeatures2},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES", StructureTypePhysicalDeviceShaderFloat16Int8Features},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES", StructureTypePhysicalDevice16bitStorageFeatures},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES", StructureTypePhysicalDevice8bitStorageFeatures},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES", StructureTypePhysicalDeviceShaderIntegerDotProductFeatures},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES", StructureTypePhysicalDeviceVulkanMemoryModelFeatures},
	{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES", StructureTypePhysicalDeviceSubgroupSizeControlFeatures},
	{"VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT", PipelineShaderStageCreateRequireFullSubgroupsBit},
	{"VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO", StructureTypeDeviceQueueCreateInfo},
	{"VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO", StructureTypeDeviceCreateInfo},
	{"VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO", StructureTypeBufferCreateInfo},
	{"VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO", StructureTypeMemoryAllocateInfo},
	{"VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO", StructureTypeDescriptorSetLayoutCreateInfo},
	{"VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO", StructureTypeDescriptorPoolCreateInfo},
	{"VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO", StructureTypeDescriptorSetAllocateInfo},
	{"VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET", StructureTypeWriteDescriptorSet},
	{"VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO", StructureTypePipelineLayoutCreateInfo},
	{"VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO", StructureTypeShaderModuleCreateInfo},
	{"VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO", StructureTypePipelineShaderStageCreateInfo},
	{"VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO", StructureTypeComputePipelineCreateInfo},
	{"VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO", StructureTypePipelineCacheCreateInfo},
	{"VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO", StructureTypeCommandPoolCreateInfo},
	{"VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO", StructureTypeCommandBufferAllocateInfo},
	{"VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO", StructureTypeCommandBufferBeginInfo},
	{"VK_STRUCTURE_TYPE_MEMORY_BARRIER", StructureTypeMemoryBarrier},
	{"VK_STRUCTURE_TYPE_SUBMIT_INFO", StructureTypeSubmitInfo},
	{"VK_STRUCTURE_TYPE_FENCE_CREATE_INFO", StructureTypeFenceCreateInfo},
	{"VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO", StructureTypeQueryPoolCreateInfo},
	{"VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU", PhysicalDeviceTypeIntegratedGpu},
	{"VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU", PhysicalDeviceTypeDiscreteGpu},
	{"VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU", PhysicalDeviceTypeVirtualGpu},
	{"VK_PHYSICAL_DEVICE_TYPE_CPU", PhysicalDeviceTypeCpu},
	{"VK_QUEUE_COMPUTE_BIT", QueueComputeBit},
	{"VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT", MemoryPropertyDeviceLocalBit},
	{"VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT", MemoryPropertyHostVisibleBit},
	{"VK_MEMORY_PROPERTY_HOST_COHERENT_BIT", MemoryPropertyHostCoherentBit},
	{"VK_MEMORY_HEAP_DEVICE_LOCAL_BIT", MemoryHeapDeviceLocalBit},
	{"VK_BUFFER_USAGE_TRANSFER_SRC_BIT", BufferUsageTransferSrcBit},
	{"VK_BUFFER_USAGE_TRANSFER_DST_BIT", BufferUsageTransferDstBit},
	{"VK_BUFFER_USAGE_STORAGE_BUFFER_BIT", BufferUsageStorageBufferBit},
	{"VK_SHARING_MODE_EXCLUSIVE", SharingModeExclusive},
	{"VK_DESCRIPTOR_TYPE_STORAGE_BUFFER", DescriptorTypeStorageBuffer},
	{"VK_SHADER_STAGE_COMPUTE_BIT", ShaderStageComputeBit},
	{"VK_SUBGROUP_FEATURE_BASIC_BIT", SubgroupFeatureBasicBit},
	{"VK_SUBGROUP_FEATURE_ARITHMETIC_BIT", SubgroupFeatureArithmeticBit},
	{"VK_SUBGROUP_FEATURE_SHUFFLE_BIT", SubgroupFeatureShuffleBit},
	{"VK_PIPELINE_BIND_POINT_COMPUTE", PipelineBindPointCompute},
	{"VK_COMMAND_BUFFER_LEVEL_PRIMARY", CommandBufferLevelPrimary},
	{"VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT", CommandBufferUsageOneTimeSubmitBit},
	{"VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT", PipelineStageTopOfPipeBit},
	{"VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT", PipelineStageComputeShaderBit},
	{"VK_PIPELINE_STAGE_TRANSFER_BIT", PipelineStageTransferBit},
	{"VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT", PipelineStageBottomOfPipeBit},
	{"VK_PIPELINE_STAGE_HOST_BIT", PipelineStageHostBit},
	{"VK_ACCESS_SHADER_READ_BIT", AccessShaderReadBit},
	{"VK_ACCESS_SHADER_WRITE_BIT", AccessShaderWriteBit},
	{"VK_ACCESS_TRANSFER_WRITE_BIT", AccessTransferWriteBit},
	{"VK_ACCESS_HOST_READ_BIT", AccessHostReadBit},
	{"VK_ACCESS_HOST_WRITE_BIT", AccessHostWriteBit},
	{"VK_QUERY_TYPE_TIMESTAMP", QueryTypeTimestamp},
	{"VK_QUERY_RESULT_64_BIT", QueryResult64Bit},
	{"VK_QUERY_RESULT_WAIT_BIT", QueryResultWaitBit},
	{"VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT", DebugUtilsMessageSeverityWarningBitEXT},
	{"VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT", DebugUtilsMessageSeverityErrorBitEXT},
	{"VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT", DebugUtilsMessageTypeGeneralBitEXT},
	{"VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT", DebugUtilsMessageTypeValidationBitEXT},
	{"VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT", DebugUtilsMessageTypePerformanceBitEXT},
	{"VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT", ValidationFeatureEnableSynchronizationValidationEXT},
	{"VK_PIPELINE_CACHE_HEADER_VERSION_ONE", HeaderVersionOne},
}

// coopmatTypes and coopmatConsts are coopmat.go's declarations, which
// headers older than 1.3.255 lack: TestLayout checks them where the
// installed header declares VK_KHR_cooperative_matrix.
var (
	coopmatTypes  = []any{PhysicalDeviceCooperativeMatrixFeaturesKHR{}, CooperativeMatrixPropertiesKHR{}}
	coopmatConsts = []struct {
		c string
		v int64
	}{
		{"VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR", StructureTypePhysicalDeviceCooperativeMatrixFeaturesKHR},
		{"VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR", StructureTypeCooperativeMatrixPropertiesKHR},
		{"VK_COMPONENT_TYPE_FLOAT16_KHR", ComponentTypeFloat16KHR},
		{"VK_COMPONENT_TYPE_FLOAT32_KHR", ComponentTypeFloat32KHR},
		{"VK_SCOPE_SUBGROUP_KHR", ScopeSubgroupKHR},
	}
)

// TestLayout compiles a C program against <vulkan/vulkan_core.h> that
// prints the size, alignment and field offsets of every struct and the
// value of every constant, and compares them with the Go declarations.
func TestLayout(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		testenv.Skip(t, "no C compiler (cc) for the layout test")
	}
	if _, err := os.Stat("/usr/include/vulkan/vulkan_core.h"); err != nil {
		testenv.Skip(t, "no <vulkan/vulkan_core.h> (install libvulkan-dev) for the layout test")
	}
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <vulkan/vulkan_core.h>\nint main(void) {\n")
	want := map[string]int64{}
	emitLayout(t, &c, want, layoutTypes, layoutConsts)
	// The declarations of coopmat.go print after a marker line where the
	// header has them; want takes them only then.
	coopmat := map[string]int64{}
	c.WriteString("#ifdef VK_KHR_cooperative_matrix\nprintf(\"" + coopmatMarker + "\\n\");\n")
	emitLayout(t, &c, coopmat, coopmatTypes, coopmatConsts)
	c.WriteString("#endif\n")
	c.WriteString("return 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "layout.c"), filepath.Join(dir, "layout")
	if err := os.WriteFile(src, []byte(c.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == coopmatMarker {
			maps.Copy(want, coopmat)
			coopmat = nil
			continue
		}
		f := strings.Fields(line)
		var got int64
		switch len(f) {
		case 2:
			got, _ = strconv.ParseInt(f[1], 10, 64)
		case 3:
			off, _ := strconv.ParseInt(f[1], 10, 64)
			size, _ := strconv.ParseInt(f[2], 10, 64)
			got = off<<32 | size
		default:
			t.Fatalf("bad line %q", line)
		}
		seen++
		if w, ok := want[f[0]]; !ok || w != got {
			if len(f) == 3 {
				t.Errorf("%s: C has offset %d size %d, Go has offset %d size %d", f[0], got>>32, got&0xffffffff, w>>32, w&0xffffffff)
			} else {
				t.Errorf("%s: C has %d, Go has %d", f[0], got, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("checked %d items, declared %d", seen, len(want))
	}
	t.Logf("%d structs, %d constants, %d items checked", len(layoutTypes), len(layoutConsts), seen)
	if coopmat != nil {
		t.Logf("the header lacks VK_KHR_cooperative_matrix: coopmat.go's %d declarations not checked", len(coopmatTypes)+len(coopmatConsts))
	}
}

// coopmatMarker is the line the layout program prints before coopmat.go's
// declarations.
const coopmatMarker = "#coopmat"

// emitLayout writes to c the printf calls of the size, alignment and
// field offsets of each struct in types and the value of each constant in
// consts, and records in want what the Go declarations say of each.
func emitLayout(t *testing.T, c *strings.Builder, want map[string]int64, types []any, consts []struct {
	c string
	v int64
}) {
	for _, v := range types {
		rt := reflect.TypeOf(v)
		name := "Vk" + rt.Name()
		fmt.Fprintf(c, "printf(\"%s#size %%zu\\n\", sizeof(%s));\n", name, name)
		fmt.Fprintf(c, "printf(\"%s#align %%zu\\n\", _Alignof(%s));\n", name, name)
		want[name+"#size"] = int64(rt.Size())
		want[name+"#align"] = int64(rt.Align())
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Name == "_" {
				if i != 0 || f.Type.String() != "structs.HostLayout" {
					t.Errorf("%s: field %d is a blank %s; only structs.HostLayout, first, is allowed", name, i, f.Type)
				}
				continue
			}
			// A field's C name is its Go name with a lowercase first
			// letter, or its c tag.
			cf := strings.ToLower(f.Name[:1]) + f.Name[1:]
			if tag := f.Tag.Get("c"); tag != "" {
				cf = tag
			}
			fmt.Fprintf(c, "printf(\"%s.%s %%zu %%zu\\n\", offsetof(%s, %s), sizeof(((%s*)0)->%s));\n", name, cf, name, cf, name, cf)
			want[name+"."+cf] = int64(f.Offset)<<32 | int64(f.Type.Size())
		}
	}
	for _, k := range consts {
		fmt.Fprintf(c, "printf(\"%s %%lld\\n\", (long long)%s);\n", k.c, k.c)
		want[k.c] = k.v
	}
}
