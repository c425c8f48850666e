// Declarations generated from <vulkan/vulkan_core.h> (Vulkan headers 1.3) by a script kept out of the tree;
// layout_test.go checks every declaration against the header.

package vk

import (
	"structs"
	"unsafe"
)

// Constants from vulkan_core.h, as the C enumerators spell them without the
// VK_ prefix.
const (
	Success                                                    = 0
	ErrorOutOfHostMemory                                       = -1
	ErrorOutOfDeviceMemory                                     = -2
	ErrorDeviceLost                                            = -4
	ErrorIncompatibleDriver                                    = -9
	StructureTypeApplicationInfo                               = 0
	StructureTypeInstanceCreateInfo                            = 1
	StructureTypeDebugUtilsMessengerCreateInfoEXT              = 1000128004
	StructureTypeValidationFeaturesEXT                         = 1000247000
	StructureTypePhysicalDeviceProperties2                     = 1000059001
	StructureTypePhysicalDeviceSubgroupProperties              = 1000094000
	StructureTypePhysicalDeviceDriverProperties                = 1000196000
	StructureTypePhysicalDeviceIDProperties                    = 1000071004
	StructureTypePhysicalDeviceFeatures2                       = 1000059000
	StructureTypePhysicalDeviceShaderFloat16Int8Features       = 1000082000
	StructureTypePhysicalDevice16bitStorageFeatures            = 1000083000
	StructureTypePhysicalDevice8bitStorageFeatures             = 1000177000
	StructureTypePhysicalDeviceShaderIntegerDotProductFeatures = 1000280000
	StructureTypePhysicalDeviceVulkanMemoryModelFeatures       = 1000211000
	StructureTypePhysicalDeviceSubgroupSizeControlFeatures     = 1000225002
	PipelineShaderStageCreateRequireFullSubgroupsBit           = 2
	StructureTypeDeviceQueueCreateInfo                         = 2
	StructureTypeDeviceCreateInfo                              = 3
	StructureTypeBufferCreateInfo                              = 12
	StructureTypeMemoryAllocateInfo                            = 5
	StructureTypeDescriptorSetLayoutCreateInfo                 = 32
	StructureTypeDescriptorPoolCreateInfo                      = 33
	StructureTypeDescriptorSetAllocateInfo                     = 34
	StructureTypeWriteDescriptorSet                            = 35
	StructureTypePipelineLayoutCreateInfo                      = 30
	StructureTypeShaderModuleCreateInfo                        = 16
	StructureTypePipelineShaderStageCreateInfo                 = 18
	StructureTypeComputePipelineCreateInfo                     = 29
	StructureTypePipelineCacheCreateInfo                       = 17
	StructureTypeCommandPoolCreateInfo                         = 39
	StructureTypeCommandBufferAllocateInfo                     = 40
	StructureTypeCommandBufferBeginInfo                        = 42
	StructureTypeMemoryBarrier                                 = 46
	StructureTypeSubmitInfo                                    = 4
	StructureTypeFenceCreateInfo                               = 8
	StructureTypeQueryPoolCreateInfo                           = 11
	PhysicalDeviceTypeIntegratedGpu                            = 1
	PhysicalDeviceTypeDiscreteGpu                              = 2
	PhysicalDeviceTypeVirtualGpu                               = 3
	PhysicalDeviceTypeCpu                                      = 4
	QueueComputeBit                                            = 2
	MemoryPropertyDeviceLocalBit                               = 1
	MemoryPropertyHostVisibleBit                               = 2
	MemoryPropertyHostCoherentBit                              = 4
	MemoryPropertyHostCachedBit                                = 8
	MemoryHeapDeviceLocalBit                                   = 1
	BufferUsageTransferSrcBit                                  = 1
	BufferUsageTransferDstBit                                  = 2
	BufferUsageStorageBufferBit                                = 32
	SharingModeExclusive                                       = 0
	DescriptorTypeStorageBuffer                                = 7
	ShaderStageComputeBit                                      = 32
	SubgroupFeatureBasicBit                                    = 1
	SubgroupFeatureArithmeticBit                               = 4
	SubgroupFeatureShuffleBit                                  = 16
	PipelineBindPointCompute                                   = 1
	CommandBufferLevelPrimary                                  = 0
	CommandBufferUsageOneTimeSubmitBit                         = 1
	PipelineStageTopOfPipeBit                                  = 1
	PipelineStageComputeShaderBit                              = 2048
	PipelineStageTransferBit                                   = 4096
	PipelineStageBottomOfPipeBit                               = 8192
	PipelineStageHostBit                                       = 16384
	AccessShaderReadBit                                        = 32
	AccessShaderWriteBit                                       = 64
	AccessTransferReadBit                                      = 2048
	AccessTransferWriteBit                                     = 4096
	AccessHostReadBit                                          = 8192
	AccessHostWriteBit                                         = 16384
	QueryTypeTimestamp                                         = 2
	QueryResult64Bit                                           = 1
	QueryResultWaitBit                                         = 2
	DebugUtilsMessageSeverityWarningBitEXT                     = 256
	DebugUtilsMessageSeverityErrorBitEXT                       = 4096
	DebugUtilsMessageTypeGeneralBitEXT                         = 1
	DebugUtilsMessageTypeValidationBitEXT                      = 2
	DebugUtilsMessageTypePerformanceBitEXT                     = 4
	ValidationFeatureEnableSynchronizationValidationEXT        = 4
)

// HeaderVersionOne is VK_PIPELINE_CACHE_HEADER_VERSION_ONE (the name
// PipelineCacheHeaderVersionOne is the header struct's).
const HeaderVersionOne = 1

// ApplicationInfo is VkApplicationInfo.
type ApplicationInfo struct {
	_                  structs.HostLayout
	SType              int32
	PNext              unsafe.Pointer
	PApplicationName   unsafe.Pointer
	ApplicationVersion uint32
	PEngineName        unsafe.Pointer
	EngineVersion      uint32
	ApiVersion         uint32
}

// InstanceCreateInfo is VkInstanceCreateInfo.
type InstanceCreateInfo struct {
	_                       structs.HostLayout
	SType                   int32
	PNext                   unsafe.Pointer
	Flags                   uint32
	PApplicationInfo        unsafe.Pointer
	EnabledLayerCount       uint32
	PpEnabledLayerNames     unsafe.Pointer
	EnabledExtensionCount   uint32
	PpEnabledExtensionNames unsafe.Pointer
}

// LayerProperties is VkLayerProperties.
type LayerProperties struct {
	_                     structs.HostLayout
	LayerName             [256]byte
	SpecVersion           uint32
	ImplementationVersion uint32
	Description           [256]byte
}

// ExtensionProperties is VkExtensionProperties.
type ExtensionProperties struct {
	_             structs.HostLayout
	ExtensionName [256]byte
	SpecVersion   uint32
}

// DebugUtilsMessengerCreateInfoEXT is VkDebugUtilsMessengerCreateInfoEXT.
type DebugUtilsMessengerCreateInfoEXT struct {
	_               structs.HostLayout
	SType           int32
	PNext           unsafe.Pointer
	Flags           uint32
	MessageSeverity uint32
	MessageType     uint32
	PfnUserCallback uintptr
	PUserData       unsafe.Pointer
}

// DebugUtilsMessengerCallbackDataEXT is VkDebugUtilsMessengerCallbackDataEXT.
type DebugUtilsMessengerCallbackDataEXT struct {
	_                structs.HostLayout
	SType            int32
	PNext            unsafe.Pointer
	Flags            uint32
	PMessageIdName   unsafe.Pointer
	MessageIdNumber  int32
	PMessage         unsafe.Pointer
	QueueLabelCount  uint32
	PQueueLabels     unsafe.Pointer
	CmdBufLabelCount uint32
	PCmdBufLabels    unsafe.Pointer
	ObjectCount      uint32
	PObjects         unsafe.Pointer
}

// ValidationFeaturesEXT is VkValidationFeaturesEXT.
type ValidationFeaturesEXT struct {
	_                              structs.HostLayout
	SType                          int32
	PNext                          unsafe.Pointer
	EnabledValidationFeatureCount  uint32
	PEnabledValidationFeatures     unsafe.Pointer
	DisabledValidationFeatureCount uint32
	PDisabledValidationFeatures    unsafe.Pointer
}

// PhysicalDeviceLimits is VkPhysicalDeviceLimits.
type PhysicalDeviceLimits struct {
	_                                               structs.HostLayout
	MaxImageDimension1D                             uint32
	MaxImageDimension2D                             uint32
	MaxImageDimension3D                             uint32
	MaxImageDimensionCube                           uint32
	MaxImageArrayLayers                             uint32
	MaxTexelBufferElements                          uint32
	MaxUniformBufferRange                           uint32
	MaxStorageBufferRange                           uint32
	MaxPushConstantsSize                            uint32
	MaxMemoryAllocationCount                        uint32
	MaxSamplerAllocationCount                       uint32
	BufferImageGranularity                          uint64
	SparseAddressSpaceSize                          uint64
	MaxBoundDescriptorSets                          uint32
	MaxPerStageDescriptorSamplers                   uint32
	MaxPerStageDescriptorUniformBuffers             uint32
	MaxPerStageDescriptorStorageBuffers             uint32
	MaxPerStageDescriptorSampledImages              uint32
	MaxPerStageDescriptorStorageImages              uint32
	MaxPerStageDescriptorInputAttachments           uint32
	MaxPerStageResources                            uint32
	MaxDescriptorSetSamplers                        uint32
	MaxDescriptorSetUniformBuffers                  uint32
	MaxDescriptorSetUniformBuffersDynamic           uint32
	MaxDescriptorSetStorageBuffers                  uint32
	MaxDescriptorSetStorageBuffersDynamic           uint32
	MaxDescriptorSetSampledImages                   uint32
	MaxDescriptorSetStorageImages                   uint32
	MaxDescriptorSetInputAttachments                uint32
	MaxVertexInputAttributes                        uint32
	MaxVertexInputBindings                          uint32
	MaxVertexInputAttributeOffset                   uint32
	MaxVertexInputBindingStride                     uint32
	MaxVertexOutputComponents                       uint32
	MaxTessellationGenerationLevel                  uint32
	MaxTessellationPatchSize                        uint32
	MaxTessellationControlPerVertexInputComponents  uint32
	MaxTessellationControlPerVertexOutputComponents uint32
	MaxTessellationControlPerPatchOutputComponents  uint32
	MaxTessellationControlTotalOutputComponents     uint32
	MaxTessellationEvaluationInputComponents        uint32
	MaxTessellationEvaluationOutputComponents       uint32
	MaxGeometryShaderInvocations                    uint32
	MaxGeometryInputComponents                      uint32
	MaxGeometryOutputComponents                     uint32
	MaxGeometryOutputVertices                       uint32
	MaxGeometryTotalOutputComponents                uint32
	MaxFragmentInputComponents                      uint32
	MaxFragmentOutputAttachments                    uint32
	MaxFragmentDualSrcAttachments                   uint32
	MaxFragmentCombinedOutputResources              uint32
	MaxComputeSharedMemorySize                      uint32
	MaxComputeWorkGroupCount                        [3]uint32
	MaxComputeWorkGroupInvocations                  uint32
	MaxComputeWorkGroupSize                         [3]uint32
	SubPixelPrecisionBits                           uint32
	SubTexelPrecisionBits                           uint32
	MipmapPrecisionBits                             uint32
	MaxDrawIndexedIndexValue                        uint32
	MaxDrawIndirectCount                            uint32
	MaxSamplerLodBias                               float32
	MaxSamplerAnisotropy                            float32
	MaxViewports                                    uint32
	MaxViewportDimensions                           [2]uint32
	ViewportBoundsRange                             [2]float32
	ViewportSubPixelBits                            uint32
	MinMemoryMapAlignment                           uintptr
	MinTexelBufferOffsetAlignment                   uint64
	MinUniformBufferOffsetAlignment                 uint64
	MinStorageBufferOffsetAlignment                 uint64
	MinTexelOffset                                  int32
	MaxTexelOffset                                  uint32
	MinTexelGatherOffset                            int32
	MaxTexelGatherOffset                            uint32
	MinInterpolationOffset                          float32
	MaxInterpolationOffset                          float32
	SubPixelInterpolationOffsetBits                 uint32
	MaxFramebufferWidth                             uint32
	MaxFramebufferHeight                            uint32
	MaxFramebufferLayers                            uint32
	FramebufferColorSampleCounts                    uint32
	FramebufferDepthSampleCounts                    uint32
	FramebufferStencilSampleCounts                  uint32
	FramebufferNoAttachmentsSampleCounts            uint32
	MaxColorAttachments                             uint32
	SampledImageColorSampleCounts                   uint32
	SampledImageIntegerSampleCounts                 uint32
	SampledImageDepthSampleCounts                   uint32
	SampledImageStencilSampleCounts                 uint32
	StorageImageSampleCounts                        uint32
	MaxSampleMaskWords                              uint32
	TimestampComputeAndGraphics                     uint32
	TimestampPeriod                                 float32
	MaxClipDistances                                uint32
	MaxCullDistances                                uint32
	MaxCombinedClipAndCullDistances                 uint32
	DiscreteQueuePriorities                         uint32
	PointSizeRange                                  [2]float32
	LineWidthRange                                  [2]float32
	PointSizeGranularity                            float32
	LineWidthGranularity                            float32
	StrictLines                                     uint32
	StandardSampleLocations                         uint32
	OptimalBufferCopyOffsetAlignment                uint64
	OptimalBufferCopyRowPitchAlignment              uint64
	NonCoherentAtomSize                             uint64
}

// PhysicalDeviceSparseProperties is VkPhysicalDeviceSparseProperties.
type PhysicalDeviceSparseProperties struct {
	_                                        structs.HostLayout
	ResidencyStandard2DBlockShape            uint32
	ResidencyStandard2DMultisampleBlockShape uint32
	ResidencyStandard3DBlockShape            uint32
	ResidencyAlignedMipSize                  uint32
	ResidencyNonResidentStrict               uint32
}

// PhysicalDeviceProperties is VkPhysicalDeviceProperties.
type PhysicalDeviceProperties struct {
	_                 structs.HostLayout
	ApiVersion        uint32
	DriverVersion     uint32
	VendorID          uint32
	DeviceID          uint32
	DeviceType        int32
	DeviceName        [256]byte
	PipelineCacheUUID [16]uint8
	Limits            PhysicalDeviceLimits
	SparseProperties  PhysicalDeviceSparseProperties
}

// PhysicalDeviceProperties2 is VkPhysicalDeviceProperties2.
type PhysicalDeviceProperties2 struct {
	_          structs.HostLayout
	SType      int32
	PNext      unsafe.Pointer
	Properties PhysicalDeviceProperties
}

// PhysicalDeviceSubgroupProperties is VkPhysicalDeviceSubgroupProperties.
type PhysicalDeviceSubgroupProperties struct {
	_                         structs.HostLayout
	SType                     int32
	PNext                     unsafe.Pointer
	SubgroupSize              uint32
	SupportedStages           uint32
	SupportedOperations       uint32
	QuadOperationsInAllStages uint32
}

// PhysicalDeviceDriverProperties is VkPhysicalDeviceDriverProperties.
type PhysicalDeviceDriverProperties struct {
	_                  structs.HostLayout
	SType              int32
	PNext              unsafe.Pointer
	DriverID           int32
	DriverName         [256]byte
	DriverInfo         [256]byte
	ConformanceVersion ConformanceVersion
}

// PhysicalDeviceIDProperties is VkPhysicalDeviceIDProperties.
type PhysicalDeviceIDProperties struct {
	_               structs.HostLayout
	SType           int32
	PNext           unsafe.Pointer
	DeviceUUID      [16]uint8
	DriverUUID      [16]uint8
	DeviceLUID      [8]uint8
	DeviceNodeMask  uint32
	DeviceLUIDValid uint32
}

// ConformanceVersion is VkConformanceVersion.
type ConformanceVersion struct {
	_        structs.HostLayout
	Major    uint8
	Minor    uint8
	Subminor uint8
	Patch    uint8
}

// PhysicalDeviceFeatures is VkPhysicalDeviceFeatures.
type PhysicalDeviceFeatures struct {
	_                                       structs.HostLayout
	RobustBufferAccess                      uint32
	FullDrawIndexUint32                     uint32
	ImageCubeArray                          uint32
	IndependentBlend                        uint32
	GeometryShader                          uint32
	TessellationShader                      uint32
	SampleRateShading                       uint32
	DualSrcBlend                            uint32
	LogicOp                                 uint32
	MultiDrawIndirect                       uint32
	DrawIndirectFirstInstance               uint32
	DepthClamp                              uint32
	DepthBiasClamp                          uint32
	FillModeNonSolid                        uint32
	DepthBounds                             uint32
	WideLines                               uint32
	LargePoints                             uint32
	AlphaToOne                              uint32
	MultiViewport                           uint32
	SamplerAnisotropy                       uint32
	TextureCompressionETC2                  uint32
	TextureCompressionASTC_LDR              uint32
	TextureCompressionBC                    uint32
	OcclusionQueryPrecise                   uint32
	PipelineStatisticsQuery                 uint32
	VertexPipelineStoresAndAtomics          uint32
	FragmentStoresAndAtomics                uint32
	ShaderTessellationAndGeometryPointSize  uint32
	ShaderImageGatherExtended               uint32
	ShaderStorageImageExtendedFormats       uint32
	ShaderStorageImageMultisample           uint32
	ShaderStorageImageReadWithoutFormat     uint32
	ShaderStorageImageWriteWithoutFormat    uint32
	ShaderUniformBufferArrayDynamicIndexing uint32
	ShaderSampledImageArrayDynamicIndexing  uint32
	ShaderStorageBufferArrayDynamicIndexing uint32
	ShaderStorageImageArrayDynamicIndexing  uint32
	ShaderClipDistance                      uint32
	ShaderCullDistance                      uint32
	ShaderFloat64                           uint32
	ShaderInt64                             uint32
	ShaderInt16                             uint32
	ShaderResourceResidency                 uint32
	ShaderResourceMinLod                    uint32
	SparseBinding                           uint32
	SparseResidencyBuffer                   uint32
	SparseResidencyImage2D                  uint32
	SparseResidencyImage3D                  uint32
	SparseResidency2Samples                 uint32
	SparseResidency4Samples                 uint32
	SparseResidency8Samples                 uint32
	SparseResidency16Samples                uint32
	SparseResidencyAliased                  uint32
	VariableMultisampleRate                 uint32
	InheritedQueries                        uint32
}

// PhysicalDeviceFeatures2 is VkPhysicalDeviceFeatures2.
type PhysicalDeviceFeatures2 struct {
	_        structs.HostLayout
	SType    int32
	PNext    unsafe.Pointer
	Features PhysicalDeviceFeatures
}

// PhysicalDeviceShaderFloat16Int8Features is VkPhysicalDeviceShaderFloat16Int8Features.
type PhysicalDeviceShaderFloat16Int8Features struct {
	_             structs.HostLayout
	SType         int32
	PNext         unsafe.Pointer
	ShaderFloat16 uint32
	ShaderInt8    uint32
}

// PhysicalDevice16BitStorageFeatures is VkPhysicalDevice16BitStorageFeatures.
type PhysicalDevice16BitStorageFeatures struct {
	_                                  structs.HostLayout
	SType                              int32
	PNext                              unsafe.Pointer
	StorageBuffer16BitAccess           uint32
	UniformAndStorageBuffer16BitAccess uint32
	StoragePushConstant16              uint32
	StorageInputOutput16               uint32
}

// PhysicalDevice8BitStorageFeatures is VkPhysicalDevice8BitStorageFeatures.
type PhysicalDevice8BitStorageFeatures struct {
	_                                 structs.HostLayout
	SType                             int32
	PNext                             unsafe.Pointer
	StorageBuffer8BitAccess           uint32
	UniformAndStorageBuffer8BitAccess uint32
	StoragePushConstant8              uint32
}

// PhysicalDeviceShaderIntegerDotProductFeatures is
// VkPhysicalDeviceShaderIntegerDotProductFeatures.
type PhysicalDeviceShaderIntegerDotProductFeatures struct {
	_                       structs.HostLayout
	SType                   int32
	PNext                   unsafe.Pointer
	ShaderIntegerDotProduct uint32
}

// PhysicalDeviceVulkanMemoryModelFeatures is VkPhysicalDeviceVulkanMemoryModelFeatures.
type PhysicalDeviceVulkanMemoryModelFeatures struct {
	_                                             structs.HostLayout
	SType                                         int32
	PNext                                         unsafe.Pointer
	VulkanMemoryModel                             uint32
	VulkanMemoryModelDeviceScope                  uint32
	VulkanMemoryModelAvailabilityVisibilityChains uint32
}

// PhysicalDeviceSubgroupSizeControlFeatures is VkPhysicalDeviceSubgroupSizeControlFeatures.
type PhysicalDeviceSubgroupSizeControlFeatures struct {
	_                    structs.HostLayout
	SType                int32
	PNext                unsafe.Pointer
	SubgroupSizeControl  uint32
	ComputeFullSubgroups uint32
}

// PhysicalDeviceMemoryProperties is VkPhysicalDeviceMemoryProperties.
type PhysicalDeviceMemoryProperties struct {
	_               structs.HostLayout
	MemoryTypeCount uint32
	MemoryTypes     [32]MemoryType
	MemoryHeapCount uint32
	MemoryHeaps     [16]MemoryHeap
}

// MemoryType is VkMemoryType.
type MemoryType struct {
	_             structs.HostLayout
	PropertyFlags uint32
	HeapIndex     uint32
}

// MemoryHeap is VkMemoryHeap.
type MemoryHeap struct {
	_     structs.HostLayout
	Size  uint64
	Flags uint32
}

// QueueFamilyProperties is VkQueueFamilyProperties.
type QueueFamilyProperties struct {
	_                           structs.HostLayout
	QueueFlags                  uint32
	QueueCount                  uint32
	TimestampValidBits          uint32
	MinImageTransferGranularity Extent3D
}

// Extent3D is VkExtent3D.
type Extent3D struct {
	_      structs.HostLayout
	Width  uint32
	Height uint32
	Depth  uint32
}

// DeviceQueueCreateInfo is VkDeviceQueueCreateInfo.
type DeviceQueueCreateInfo struct {
	_                structs.HostLayout
	SType            int32
	PNext            unsafe.Pointer
	Flags            uint32
	QueueFamilyIndex uint32
	QueueCount       uint32
	PQueuePriorities unsafe.Pointer
}

// DeviceCreateInfo is VkDeviceCreateInfo.
type DeviceCreateInfo struct {
	_                       structs.HostLayout
	SType                   int32
	PNext                   unsafe.Pointer
	Flags                   uint32
	QueueCreateInfoCount    uint32
	PQueueCreateInfos       unsafe.Pointer
	EnabledLayerCount       uint32
	PpEnabledLayerNames     unsafe.Pointer
	EnabledExtensionCount   uint32
	PpEnabledExtensionNames unsafe.Pointer
	PEnabledFeatures        unsafe.Pointer
}

// BufferCreateInfo is VkBufferCreateInfo.
type BufferCreateInfo struct {
	_                     structs.HostLayout
	SType                 int32
	PNext                 unsafe.Pointer
	Flags                 uint32
	Size                  uint64
	Usage                 uint32
	SharingMode           int32
	QueueFamilyIndexCount uint32
	PQueueFamilyIndices   unsafe.Pointer
}

// MemoryRequirements is VkMemoryRequirements.
type MemoryRequirements struct {
	_              structs.HostLayout
	Size           uint64
	Alignment      uint64
	MemoryTypeBits uint32
}

// MemoryAllocateInfo is VkMemoryAllocateInfo.
type MemoryAllocateInfo struct {
	_               structs.HostLayout
	SType           int32
	PNext           unsafe.Pointer
	AllocationSize  uint64
	MemoryTypeIndex uint32
}

// DescriptorSetLayoutBinding is VkDescriptorSetLayoutBinding.
type DescriptorSetLayoutBinding struct {
	_                  structs.HostLayout
	Binding            uint32
	DescriptorType     int32
	DescriptorCount    uint32
	StageFlags         uint32
	PImmutableSamplers unsafe.Pointer
}

// DescriptorSetLayoutCreateInfo is VkDescriptorSetLayoutCreateInfo.
type DescriptorSetLayoutCreateInfo struct {
	_            structs.HostLayout
	SType        int32
	PNext        unsafe.Pointer
	Flags        uint32
	BindingCount uint32
	PBindings    unsafe.Pointer
}

// DescriptorPoolSize is VkDescriptorPoolSize.
type DescriptorPoolSize struct {
	_               structs.HostLayout
	Type            int32
	DescriptorCount uint32
}

// DescriptorPoolCreateInfo is VkDescriptorPoolCreateInfo.
type DescriptorPoolCreateInfo struct {
	_             structs.HostLayout
	SType         int32
	PNext         unsafe.Pointer
	Flags         uint32
	MaxSets       uint32
	PoolSizeCount uint32
	PPoolSizes    unsafe.Pointer
}

// DescriptorSetAllocateInfo is VkDescriptorSetAllocateInfo.
type DescriptorSetAllocateInfo struct {
	_                  structs.HostLayout
	SType              int32
	PNext              unsafe.Pointer
	DescriptorPool     uintptr
	DescriptorSetCount uint32
	PSetLayouts        unsafe.Pointer
}

// DescriptorBufferInfo is VkDescriptorBufferInfo.
type DescriptorBufferInfo struct {
	_      structs.HostLayout
	Buffer uintptr
	Offset uint64
	Range  uint64
}

// WriteDescriptorSet is VkWriteDescriptorSet.
type WriteDescriptorSet struct {
	_                structs.HostLayout
	SType            int32
	PNext            unsafe.Pointer
	DstSet           uintptr
	DstBinding       uint32
	DstArrayElement  uint32
	DescriptorCount  uint32
	DescriptorType   int32
	PImageInfo       unsafe.Pointer
	PBufferInfo      unsafe.Pointer
	PTexelBufferView unsafe.Pointer
}

// PushConstantRange is VkPushConstantRange.
type PushConstantRange struct {
	_          structs.HostLayout
	StageFlags uint32
	Offset     uint32
	Size       uint32
}

// PipelineLayoutCreateInfo is VkPipelineLayoutCreateInfo.
type PipelineLayoutCreateInfo struct {
	_                      structs.HostLayout
	SType                  int32
	PNext                  unsafe.Pointer
	Flags                  uint32
	SetLayoutCount         uint32
	PSetLayouts            unsafe.Pointer
	PushConstantRangeCount uint32
	PPushConstantRanges    unsafe.Pointer
}

// ShaderModuleCreateInfo is VkShaderModuleCreateInfo.
type ShaderModuleCreateInfo struct {
	_        structs.HostLayout
	SType    int32
	PNext    unsafe.Pointer
	Flags    uint32
	CodeSize uintptr
	PCode    unsafe.Pointer
}

// SpecializationMapEntry is VkSpecializationMapEntry.
type SpecializationMapEntry struct {
	_          structs.HostLayout
	ConstantID uint32
	Offset     uint32
	Size       uintptr
}

// SpecializationInfo is VkSpecializationInfo.
type SpecializationInfo struct {
	_             structs.HostLayout
	MapEntryCount uint32
	PMapEntries   unsafe.Pointer
	DataSize      uintptr
	PData         unsafe.Pointer
}

// PipelineShaderStageCreateInfo is VkPipelineShaderStageCreateInfo.
type PipelineShaderStageCreateInfo struct {
	_                   structs.HostLayout
	SType               int32
	PNext               unsafe.Pointer
	Flags               uint32
	Stage               int32
	Module              uintptr
	PName               unsafe.Pointer
	PSpecializationInfo unsafe.Pointer
}

// ComputePipelineCreateInfo is VkComputePipelineCreateInfo.
type ComputePipelineCreateInfo struct {
	_                  structs.HostLayout
	SType              int32
	PNext              unsafe.Pointer
	Flags              uint32
	Stage              PipelineShaderStageCreateInfo
	Layout             uintptr
	BasePipelineHandle uintptr
	BasePipelineIndex  int32
}

// PipelineCacheCreateInfo is VkPipelineCacheCreateInfo.
type PipelineCacheCreateInfo struct {
	_               structs.HostLayout
	SType           int32
	PNext           unsafe.Pointer
	Flags           uint32
	InitialDataSize uintptr
	PInitialData    unsafe.Pointer
}

// PipelineCacheHeaderVersionOne is VkPipelineCacheHeaderVersionOne, the
// header that starts pipeline cache data; the spec stores its fields least
// significant byte first whatever the host's byte order.
type PipelineCacheHeaderVersionOne struct {
	_                 structs.HostLayout
	HeaderSize        uint32
	HeaderVersion     int32
	VendorID          uint32
	DeviceID          uint32
	PipelineCacheUUID [16]uint8
}

// CommandPoolCreateInfo is VkCommandPoolCreateInfo.
type CommandPoolCreateInfo struct {
	_                structs.HostLayout
	SType            int32
	PNext            unsafe.Pointer
	Flags            uint32
	QueueFamilyIndex uint32
}

// CommandBufferAllocateInfo is VkCommandBufferAllocateInfo.
type CommandBufferAllocateInfo struct {
	_                  structs.HostLayout
	SType              int32
	PNext              unsafe.Pointer
	CommandPool        uintptr
	Level              int32
	CommandBufferCount uint32
}

// CommandBufferBeginInfo is VkCommandBufferBeginInfo.
type CommandBufferBeginInfo struct {
	_                structs.HostLayout
	SType            int32
	PNext            unsafe.Pointer
	Flags            uint32
	PInheritanceInfo unsafe.Pointer
}

// MemoryBarrier is VkMemoryBarrier.
type MemoryBarrier struct {
	_             structs.HostLayout
	SType         int32
	PNext         unsafe.Pointer
	SrcAccessMask uint32
	DstAccessMask uint32
}

// BufferCopy is VkBufferCopy.
type BufferCopy struct {
	_         structs.HostLayout
	SrcOffset uint64
	DstOffset uint64
	Size      uint64
}

// SubmitInfo is VkSubmitInfo.
type SubmitInfo struct {
	_                    structs.HostLayout
	SType                int32
	PNext                unsafe.Pointer
	WaitSemaphoreCount   uint32
	PWaitSemaphores      unsafe.Pointer
	PWaitDstStageMask    unsafe.Pointer
	CommandBufferCount   uint32
	PCommandBuffers      unsafe.Pointer
	SignalSemaphoreCount uint32
	PSignalSemaphores    unsafe.Pointer
}

// FenceCreateInfo is VkFenceCreateInfo.
type FenceCreateInfo struct {
	_     structs.HostLayout
	SType int32
	PNext unsafe.Pointer
	Flags uint32
}

// QueryPoolCreateInfo is VkQueryPoolCreateInfo.
type QueryPoolCreateInfo struct {
	_                  structs.HostLayout
	SType              int32
	PNext              unsafe.Pointer
	Flags              uint32
	QueryType          int32
	QueryCount         uint32
	PipelineStatistics uint32
}

// resultNames maps VkResult values to their C names.
var resultNames = map[Result]string{
	0:           "VK_SUCCESS",
	1:           "VK_NOT_READY",
	2:           "VK_TIMEOUT",
	3:           "VK_EVENT_SET",
	4:           "VK_EVENT_RESET",
	5:           "VK_INCOMPLETE",
	-1:          "VK_ERROR_OUT_OF_HOST_MEMORY",
	-2:          "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	-3:          "VK_ERROR_INITIALIZATION_FAILED",
	-4:          "VK_ERROR_DEVICE_LOST",
	-5:          "VK_ERROR_MEMORY_MAP_FAILED",
	-6:          "VK_ERROR_LAYER_NOT_PRESENT",
	-7:          "VK_ERROR_EXTENSION_NOT_PRESENT",
	-8:          "VK_ERROR_FEATURE_NOT_PRESENT",
	-9:          "VK_ERROR_INCOMPATIBLE_DRIVER",
	-10:         "VK_ERROR_TOO_MANY_OBJECTS",
	-11:         "VK_ERROR_FORMAT_NOT_SUPPORTED",
	-12:         "VK_ERROR_FRAGMENTED_POOL",
	-13:         "VK_ERROR_UNKNOWN",
	-1000069000: "VK_ERROR_OUT_OF_POOL_MEMORY",
	-1000072003: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	-1000161000: "VK_ERROR_FRAGMENTATION",
	-1000257000: "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
	1000297000:  "VK_PIPELINE_COMPILE_REQUIRED",
	-1000000000: "VK_ERROR_SURFACE_LOST_KHR",
	-1000000001: "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR",
	1000001003:  "VK_SUBOPTIMAL_KHR",
	-1000001004: "VK_ERROR_OUT_OF_DATE_KHR",
	-1000003001: "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR",
	-1000011001: "VK_ERROR_VALIDATION_FAILED_EXT",
	-1000012000: "VK_ERROR_INVALID_SHADER_NV",
	-1000023000: "VK_ERROR_IMAGE_USAGE_NOT_SUPPORTED_KHR",
	-1000023001: "VK_ERROR_VIDEO_PICTURE_LAYOUT_NOT_SUPPORTED_KHR",
	-1000023002: "VK_ERROR_VIDEO_PROFILE_OPERATION_NOT_SUPPORTED_KHR",
	-1000023003: "VK_ERROR_VIDEO_PROFILE_FORMAT_NOT_SUPPORTED_KHR",
	-1000023004: "VK_ERROR_VIDEO_PROFILE_CODEC_NOT_SUPPORTED_KHR",
	-1000023005: "VK_ERROR_VIDEO_STD_VERSION_NOT_SUPPORTED_KHR",
	-1000158000: "VK_ERROR_INVALID_DRM_FORMAT_MODIFIER_PLANE_LAYOUT_EXT",
	-1000174001: "VK_ERROR_NOT_PERMITTED_KHR",
	-1000255000: "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT",
	1000268000:  "VK_THREAD_IDLE_KHR",
	1000268001:  "VK_THREAD_DONE_KHR",
	1000268002:  "VK_OPERATION_DEFERRED_KHR",
	1000268003:  "VK_OPERATION_NOT_DEFERRED_KHR",
	-1000338000: "VK_ERROR_COMPRESSION_EXHAUSTED_EXT",
}
