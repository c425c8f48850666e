// Package vk is onnxvk's binding of the Vulkan API on purego: the loader
// library is opened lazily, once, and every entry point is called with
// purego.SyscallN. Handles are integers; structs are declared with
// structs.HostLayout first and must be passed in memory the collector
// neither frees nor moves while the driver reads it: Go heap objects (the
// collector does not move them; SyscallN's go:uintptrescapes keeps the
// argument alive for the call and pointer fields, typed unsafe.Pointer,
// keep what they point to reachable), pinned where a struct outlives the
// call that takes it.
//
// Every function that creates or allocates a Vulkan object adds one to a
// process-wide count that the matching destroy or free takes back, so tests
// can check that nothing leaks (see Live).
package vk

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Result is a VkResult.
type Result int32

// Error returns the C name of the result.
func (r Result) Error() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// ErrNoLoader is wrapped when the Vulkan loader library cannot be opened.
var ErrNoLoader = errors.New("vk: cannot open " + LoaderName)

// MakeAPIVersion is VK_MAKE_API_VERSION(0, major, minor, patch).
func MakeAPIVersion(major, minor, patch uint32) uint32 { return major<<22 | minor<<12 | patch }

// APIVersionString formats a packed API version as major.minor.patch.
func APIVersionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff)
}

// WholeSize is VK_WHOLE_SIZE.
const WholeSize = ^uint64(0)

var (
	loadOnce sync.Once
	loadErr  error
	live     atomic.Int64
	submits  atomic.Int64
	fn       struct {
		createInstance, destroyInstance, enumerateInstanceLayerProperties, getInstanceProcAddr       uintptr
		enumeratePhysicalDevices, getPhysicalDeviceProperties2, getPhysicalDeviceFeatures2           uintptr
		getPhysicalDeviceMemoryProperties, getPhysicalDeviceQueueFamilyProperties                    uintptr
		enumerateDeviceExtensionProperties, createDevice, destroyDevice, getDeviceQueue              uintptr
		createBuffer, destroyBuffer, getBufferMemoryRequirements, allocateMemory, freeMemory         uintptr
		bindBufferMemory, mapMemory, createDescriptorSetLayout, destroyDescriptorSetLayout           uintptr
		createDescriptorPool, destroyDescriptorPool, allocateDescriptorSets, updateDescriptorSets    uintptr
		createPipelineLayout, destroyPipelineLayout, createShaderModule, destroyShaderModule         uintptr
		createComputePipelines, destroyPipeline, createCommandPool, destroyCommandPool               uintptr
		allocateCommandBuffers, beginCommandBuffer, endCommandBuffer, cmdBindPipeline                uintptr
		cmdBindDescriptorSets, cmdPushConstants, cmdDispatch, cmdPipelineBarrier, cmdCopyBuffer      uintptr
		createFence, destroyFence, resetFences, waitForFences, queueSubmit, deviceWaitIdle           uintptr
		createQueryPool, destroyQueryPool, cmdResetQueryPool, cmdWriteTimestamp, getQueryPoolResults uintptr
		resetCommandPool, createPipelineCache, destroyPipelineCache, getPipelineCacheData            uintptr
	}
)

// Load opens the Vulkan loader and resolves every entry point. It runs
// once; later calls return the first result.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

func load() error {
	lib, err := openLoader()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoLoader, err)
	}
	syms := []struct {
		p    *uintptr
		name string
	}{
		{&fn.createInstance, "vkCreateInstance"}, {&fn.destroyInstance, "vkDestroyInstance"},
		{&fn.enumerateInstanceLayerProperties, "vkEnumerateInstanceLayerProperties"},
		{&fn.getInstanceProcAddr, "vkGetInstanceProcAddr"},
		{&fn.enumeratePhysicalDevices, "vkEnumeratePhysicalDevices"},
		{&fn.getPhysicalDeviceProperties2, "vkGetPhysicalDeviceProperties2"},
		{&fn.getPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2"},
		{&fn.getPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties"},
		{&fn.getPhysicalDeviceQueueFamilyProperties, "vkGetPhysicalDeviceQueueFamilyProperties"},
		{&fn.enumerateDeviceExtensionProperties, "vkEnumerateDeviceExtensionProperties"},
		{&fn.createDevice, "vkCreateDevice"}, {&fn.destroyDevice, "vkDestroyDevice"},
		{&fn.getDeviceQueue, "vkGetDeviceQueue"},
		{&fn.createBuffer, "vkCreateBuffer"}, {&fn.destroyBuffer, "vkDestroyBuffer"},
		{&fn.getBufferMemoryRequirements, "vkGetBufferMemoryRequirements"},
		{&fn.allocateMemory, "vkAllocateMemory"}, {&fn.freeMemory, "vkFreeMemory"},
		{&fn.bindBufferMemory, "vkBindBufferMemory"}, {&fn.mapMemory, "vkMapMemory"},
		{&fn.createDescriptorSetLayout, "vkCreateDescriptorSetLayout"},
		{&fn.destroyDescriptorSetLayout, "vkDestroyDescriptorSetLayout"},
		{&fn.createDescriptorPool, "vkCreateDescriptorPool"}, {&fn.destroyDescriptorPool, "vkDestroyDescriptorPool"},
		{&fn.allocateDescriptorSets, "vkAllocateDescriptorSets"}, {&fn.updateDescriptorSets, "vkUpdateDescriptorSets"},
		{&fn.createPipelineLayout, "vkCreatePipelineLayout"}, {&fn.destroyPipelineLayout, "vkDestroyPipelineLayout"},
		{&fn.createShaderModule, "vkCreateShaderModule"}, {&fn.destroyShaderModule, "vkDestroyShaderModule"},
		{&fn.createComputePipelines, "vkCreateComputePipelines"}, {&fn.destroyPipeline, "vkDestroyPipeline"},
		{&fn.createPipelineCache, "vkCreatePipelineCache"}, {&fn.destroyPipelineCache, "vkDestroyPipelineCache"},
		{&fn.getPipelineCacheData, "vkGetPipelineCacheData"},
		{&fn.createCommandPool, "vkCreateCommandPool"}, {&fn.destroyCommandPool, "vkDestroyCommandPool"},
		{&fn.resetCommandPool, "vkResetCommandPool"},
		{&fn.allocateCommandBuffers, "vkAllocateCommandBuffers"},
		{&fn.beginCommandBuffer, "vkBeginCommandBuffer"}, {&fn.endCommandBuffer, "vkEndCommandBuffer"},
		{&fn.cmdBindPipeline, "vkCmdBindPipeline"}, {&fn.cmdBindDescriptorSets, "vkCmdBindDescriptorSets"},
		{&fn.cmdPushConstants, "vkCmdPushConstants"}, {&fn.cmdDispatch, "vkCmdDispatch"},
		{&fn.cmdPipelineBarrier, "vkCmdPipelineBarrier"}, {&fn.cmdCopyBuffer, "vkCmdCopyBuffer"},
		{&fn.createFence, "vkCreateFence"}, {&fn.destroyFence, "vkDestroyFence"},
		{&fn.resetFences, "vkResetFences"}, {&fn.waitForFences, "vkWaitForFences"},
		{&fn.queueSubmit, "vkQueueSubmit"}, {&fn.deviceWaitIdle, "vkDeviceWaitIdle"},
		{&fn.createQueryPool, "vkCreateQueryPool"}, {&fn.destroyQueryPool, "vkDestroyQueryPool"},
		{&fn.cmdResetQueryPool, "vkCmdResetQueryPool"}, {&fn.cmdWriteTimestamp, "vkCmdWriteTimestamp"},
		{&fn.getQueryPoolResults, "vkGetQueryPoolResults"},
	}
	for _, s := range syms {
		p, err := loaderSymbol(lib, s.name)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNoLoader, s.name, err)
		}
		*s.p = p
	}
	return nil
}

// Live is the number of Vulkan objects created through this package and
// not yet destroyed.
func Live() int64 { return live.Load() }

// Submits is the number of vkQueueSubmit calls made through this package.
func Submits() int64 { return submits.Load() }

func result(r uintptr) error {
	if res := Result(int32(r)); res < 0 {
		return res
	}
	return nil
}

// created counts one object when the call that made it succeeded.
func created(r uintptr) error {
	err := result(r)
	if err == nil {
		live.Add(1)
	}
	return err
}

func destroyed(n int64) { live.Add(-n) }

// Cstr returns s as a NUL-terminated byte slice.
func Cstr(s string) []byte { return append([]byte(s), 0) }

// GoString returns the NUL-terminated string at the start of b.
func GoString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// CreateInstance is vkCreateInstance. ci points to an InstanceCreateInfo.
func CreateInstance(ci unsafe.Pointer, inst *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createInstance, uintptr(ci), 0, uintptr(unsafe.Pointer(inst)))
	return created(r)
}

// DestroyInstance is vkDestroyInstance.
func DestroyInstance(inst uintptr) {
	purego.SyscallN(fn.destroyInstance, inst, 0)
	destroyed(1)
}

// EnumerateInstanceLayerProperties is vkEnumerateInstanceLayerProperties.
func EnumerateInstanceLayerProperties() ([]LayerProperties, error) {
	var n uint32
	r, _, _ := purego.SyscallN(fn.enumerateInstanceLayerProperties, uintptr(unsafe.Pointer(&n)), 0)
	if err := result(r); err != nil || n == 0 {
		return nil, err
	}
	out := make([]LayerProperties, n)
	r, _, _ = purego.SyscallN(fn.enumerateInstanceLayerProperties, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n], result(r)
}

// GetInstanceProcAddr is vkGetInstanceProcAddr; name is NUL-terminated.
func GetInstanceProcAddr(inst uintptr, name []byte) uintptr {
	r, _, _ := purego.SyscallN(fn.getInstanceProcAddr, inst, uintptr(unsafe.Pointer(&name[0])))
	return r
}

// CreateDebugUtilsMessengerEXT calls vkCreateDebugUtilsMessengerEXT
// through its address f.
func CreateDebugUtilsMessengerEXT(f, inst uintptr, ci *DebugUtilsMessengerCreateInfoEXT, out *uintptr) error {
	r, _, _ := purego.SyscallN(f, inst, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyDebugUtilsMessengerEXT calls vkDestroyDebugUtilsMessengerEXT
// through its address f.
func DestroyDebugUtilsMessengerEXT(f, inst, m uintptr) {
	purego.SyscallN(f, inst, m, 0)
	destroyed(1)
}

// EnumeratePhysicalDevices is vkEnumeratePhysicalDevices.
func EnumeratePhysicalDevices(inst uintptr) ([]uintptr, error) {
	var n uint32
	r, _, _ := purego.SyscallN(fn.enumeratePhysicalDevices, inst, uintptr(unsafe.Pointer(&n)), 0)
	if err := result(r); err != nil || n == 0 {
		return nil, err
	}
	out := make([]uintptr, n)
	r, _, _ = purego.SyscallN(fn.enumeratePhysicalDevices, inst, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n], result(r)
}

// GetPhysicalDeviceProperties2 is vkGetPhysicalDeviceProperties2.
func GetPhysicalDeviceProperties2(pd uintptr, p *PhysicalDeviceProperties2) {
	purego.SyscallN(fn.getPhysicalDeviceProperties2, pd, uintptr(unsafe.Pointer(p)))
}

// GetPhysicalDeviceFeatures2 is vkGetPhysicalDeviceFeatures2.
func GetPhysicalDeviceFeatures2(pd uintptr, f *PhysicalDeviceFeatures2) {
	purego.SyscallN(fn.getPhysicalDeviceFeatures2, pd, uintptr(unsafe.Pointer(f)))
}

// GetPhysicalDeviceMemoryProperties is vkGetPhysicalDeviceMemoryProperties.
func GetPhysicalDeviceMemoryProperties(pd uintptr, p *PhysicalDeviceMemoryProperties) {
	purego.SyscallN(fn.getPhysicalDeviceMemoryProperties, pd, uintptr(unsafe.Pointer(p)))
}

// GetPhysicalDeviceQueueFamilyProperties is
// vkGetPhysicalDeviceQueueFamilyProperties.
func GetPhysicalDeviceQueueFamilyProperties(pd uintptr) []QueueFamilyProperties {
	var n uint32
	purego.SyscallN(fn.getPhysicalDeviceQueueFamilyProperties, pd, uintptr(unsafe.Pointer(&n)), 0)
	if n == 0 {
		return nil
	}
	out := make([]QueueFamilyProperties, n)
	purego.SyscallN(fn.getPhysicalDeviceQueueFamilyProperties, pd, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n]
}

// EnumerateDeviceExtensionProperties is vkEnumerateDeviceExtensionProperties
// for the implementation's own extensions.
func EnumerateDeviceExtensionProperties(pd uintptr) ([]ExtensionProperties, error) {
	var n uint32
	r, _, _ := purego.SyscallN(fn.enumerateDeviceExtensionProperties, pd, 0, uintptr(unsafe.Pointer(&n)), 0)
	if err := result(r); err != nil || n == 0 {
		return nil, err
	}
	out := make([]ExtensionProperties, n)
	r, _, _ = purego.SyscallN(fn.enumerateDeviceExtensionProperties, pd, 0, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n], result(r)
}

// CreateDevice is vkCreateDevice.
func CreateDevice(pd uintptr, ci *DeviceCreateInfo, dev *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createDevice, pd, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(dev)))
	return created(r)
}

// DestroyDevice is vkDestroyDevice.
func DestroyDevice(dev uintptr) {
	purego.SyscallN(fn.destroyDevice, dev, 0)
	destroyed(1)
}

// GetDeviceQueue is vkGetDeviceQueue.
func GetDeviceQueue(dev uintptr, family, index uint32) uintptr {
	var q uintptr
	purego.SyscallN(fn.getDeviceQueue, dev, uintptr(family), uintptr(index), uintptr(unsafe.Pointer(&q)))
	return q
}

// DeviceWaitIdle is vkDeviceWaitIdle.
func DeviceWaitIdle(dev uintptr) error {
	r, _, _ := purego.SyscallN(fn.deviceWaitIdle, dev)
	return result(r)
}

// CreateBuffer is vkCreateBuffer.
func CreateBuffer(dev uintptr, ci *BufferCreateInfo, buf *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createBuffer, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(buf)))
	return created(r)
}

// DestroyBuffer is vkDestroyBuffer.
func DestroyBuffer(dev, buf uintptr) {
	purego.SyscallN(fn.destroyBuffer, dev, buf, 0)
	destroyed(1)
}

// GetBufferMemoryRequirements is vkGetBufferMemoryRequirements.
func GetBufferMemoryRequirements(dev, buf uintptr, req *MemoryRequirements) {
	purego.SyscallN(fn.getBufferMemoryRequirements, dev, buf, uintptr(unsafe.Pointer(req)))
}

// AllocateMemory is vkAllocateMemory.
func AllocateMemory(dev uintptr, ai *MemoryAllocateInfo, mem *uintptr) error {
	r, _, _ := purego.SyscallN(fn.allocateMemory, dev, uintptr(unsafe.Pointer(ai)), 0, uintptr(unsafe.Pointer(mem)))
	return created(r)
}

// FreeMemory is vkFreeMemory (which also unmaps it).
func FreeMemory(dev, mem uintptr) {
	purego.SyscallN(fn.freeMemory, dev, mem, 0)
	destroyed(1)
}

// BindBufferMemory is vkBindBufferMemory.
func BindBufferMemory(dev, buf, mem uintptr, off uint64) error {
	r, _, _ := purego.SyscallN(fn.bindBufferMemory, dev, buf, mem, uintptr(off))
	return result(r)
}

// MapMemory is vkMapMemory of the whole allocation; *data receives the
// host address.
func MapMemory(dev, mem uintptr, data *unsafe.Pointer) error {
	r, _, _ := purego.SyscallN(fn.mapMemory, dev, mem, 0, uintptr(WholeSize), 0, uintptr(unsafe.Pointer(data)))
	return result(r)
}

// CreateDescriptorSetLayout is vkCreateDescriptorSetLayout.
func CreateDescriptorSetLayout(dev uintptr, ci *DescriptorSetLayoutCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createDescriptorSetLayout, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyDescriptorSetLayout is vkDestroyDescriptorSetLayout.
func DestroyDescriptorSetLayout(dev, l uintptr) {
	purego.SyscallN(fn.destroyDescriptorSetLayout, dev, l, 0)
	destroyed(1)
}

// CreateDescriptorPool is vkCreateDescriptorPool.
func CreateDescriptorPool(dev uintptr, ci *DescriptorPoolCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createDescriptorPool, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyDescriptorPool is vkDestroyDescriptorPool; it frees the pool's
// sets.
func DestroyDescriptorPool(dev, p uintptr) {
	purego.SyscallN(fn.destroyDescriptorPool, dev, p, 0)
	destroyed(1)
}

// AllocateDescriptorSets is vkAllocateDescriptorSets; sets are owned by
// their pool and not counted.
func AllocateDescriptorSets(dev uintptr, ai *DescriptorSetAllocateInfo, sets *uintptr) error {
	r, _, _ := purego.SyscallN(fn.allocateDescriptorSets, dev, uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(sets)))
	return result(r)
}

// UpdateDescriptorSets is vkUpdateDescriptorSets without copies.
func UpdateDescriptorSets(dev uintptr, writes []WriteDescriptorSet) {
	purego.SyscallN(fn.updateDescriptorSets, dev, uintptr(len(writes)), uintptr(unsafe.Pointer(&writes[0])), 0, 0)
}

// CreatePipelineLayout is vkCreatePipelineLayout.
func CreatePipelineLayout(dev uintptr, ci *PipelineLayoutCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createPipelineLayout, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyPipelineLayout is vkDestroyPipelineLayout.
func DestroyPipelineLayout(dev, l uintptr) {
	purego.SyscallN(fn.destroyPipelineLayout, dev, l, 0)
	destroyed(1)
}

// CreateShaderModule is vkCreateShaderModule.
func CreateShaderModule(dev uintptr, ci *ShaderModuleCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createShaderModule, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyShaderModule is vkDestroyShaderModule.
func DestroyShaderModule(dev, m uintptr) {
	purego.SyscallN(fn.destroyShaderModule, dev, m, 0)
	destroyed(1)
}

// CreateComputePipeline is vkCreateComputePipelines for one pipeline
// through the pipeline cache (0: none).
func CreateComputePipeline(dev, cache uintptr, ci *ComputePipelineCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createComputePipelines, dev, cache, 1, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// CreatePipelineCache is vkCreatePipelineCache. ci.PInitialData, when
// set, must point to memory without Go pointers.
func CreatePipelineCache(dev uintptr, ci *PipelineCacheCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createPipelineCache, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyPipelineCache is vkDestroyPipelineCache.
func DestroyPipelineCache(dev, c uintptr) {
	purego.SyscallN(fn.destroyPipelineCache, dev, c, 0)
	destroyed(1)
}

// GetPipelineCacheData is vkGetPipelineCacheData: the cache's contents,
// header first.
func GetPipelineCacheData(dev, c uintptr) ([]byte, error) {
	var n uintptr
	r, _, _ := purego.SyscallN(fn.getPipelineCacheData, dev, c, uintptr(unsafe.Pointer(&n)), 0)
	if err := result(r); err != nil || n == 0 {
		return nil, err
	}
	out := make([]byte, n)
	r, _, _ = purego.SyscallN(fn.getPipelineCacheData, dev, c, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n], result(r)
}

// DestroyPipeline is vkDestroyPipeline.
func DestroyPipeline(dev, p uintptr) {
	purego.SyscallN(fn.destroyPipeline, dev, p, 0)
	destroyed(1)
}

// CreateCommandPool is vkCreateCommandPool.
func CreateCommandPool(dev uintptr, ci *CommandPoolCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createCommandPool, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyCommandPool is vkDestroyCommandPool; it frees the pool's command
// buffers.
func DestroyCommandPool(dev, p uintptr) {
	purego.SyscallN(fn.destroyCommandPool, dev, p, 0)
	destroyed(1)
}

// ResetCommandPool is vkResetCommandPool: the pool's command buffers
// return to the initial state, to be recorded again.
func ResetCommandPool(dev, p uintptr) error {
	r, _, _ := purego.SyscallN(fn.resetCommandPool, dev, p, 0)
	return result(r)
}

// AllocateCommandBuffers is vkAllocateCommandBuffers; command buffers are
// owned by their pool and not counted.
func AllocateCommandBuffers(dev uintptr, ai *CommandBufferAllocateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.allocateCommandBuffers, dev, uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(out)))
	return result(r)
}

// BeginCommandBuffer is vkBeginCommandBuffer.
func BeginCommandBuffer(cb uintptr, bi *CommandBufferBeginInfo) error {
	r, _, _ := purego.SyscallN(fn.beginCommandBuffer, cb, uintptr(unsafe.Pointer(bi)))
	return result(r)
}

// EndCommandBuffer is vkEndCommandBuffer.
func EndCommandBuffer(cb uintptr) error {
	r, _, _ := purego.SyscallN(fn.endCommandBuffer, cb)
	return result(r)
}

// CmdBindPipeline is vkCmdBindPipeline for the compute bind point.
func CmdBindPipeline(cb, p uintptr) {
	purego.SyscallN(fn.cmdBindPipeline, cb, PipelineBindPointCompute, p)
}

// CmdBindDescriptorSet is vkCmdBindDescriptorSets for one compute set at
// index 0 without dynamic offsets.
func CmdBindDescriptorSet(cb, layout uintptr, set *uintptr) {
	purego.SyscallN(fn.cmdBindDescriptorSets, cb, PipelineBindPointCompute, layout, 0, 1, uintptr(unsafe.Pointer(set)), 0, 0)
}

// CmdPushConstants is vkCmdPushConstants for the compute stage at offset 0.
func CmdPushConstants(cb, layout uintptr, data []byte) {
	purego.SyscallN(fn.cmdPushConstants, cb, layout, ShaderStageComputeBit, 0, uintptr(len(data)), uintptr(unsafe.Pointer(&data[0])))
}

// CmdDispatch is vkCmdDispatch.
func CmdDispatch(cb uintptr, x, y, z uint32) {
	purego.SyscallN(fn.cmdDispatch, cb, uintptr(x), uintptr(y), uintptr(z))
}

// CmdPipelineBarrier is vkCmdPipelineBarrier with one global memory barrier.
func CmdPipelineBarrier(cb uintptr, src, dst uint32, mb *MemoryBarrier) {
	purego.SyscallN(fn.cmdPipelineBarrier, cb, uintptr(src), uintptr(dst), 0, 1, uintptr(unsafe.Pointer(mb)), 0, 0, 0, 0)
}

// CmdCopyBuffer is vkCmdCopyBuffer with one region.
func CmdCopyBuffer(cb, src, dst uintptr, region *BufferCopy) {
	purego.SyscallN(fn.cmdCopyBuffer, cb, src, dst, 1, uintptr(unsafe.Pointer(region)))
}

// CmdCopyBufferRegions is vkCmdCopyBuffer with several regions.
func CmdCopyBufferRegions(cb, src, dst uintptr, regions []BufferCopy) {
	if len(regions) == 0 {
		return
	}
	purego.SyscallN(fn.cmdCopyBuffer, cb, src, dst, uintptr(len(regions)), uintptr(unsafe.Pointer(&regions[0])))
}

// CreateFence is vkCreateFence.
func CreateFence(dev uintptr, ci *FenceCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createFence, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyFence is vkDestroyFence.
func DestroyFence(dev, f uintptr) {
	purego.SyscallN(fn.destroyFence, dev, f, 0)
	destroyed(1)
}

// ResetFence is vkResetFences for one fence.
func ResetFence(dev uintptr, f *uintptr) error {
	r, _, _ := purego.SyscallN(fn.resetFences, dev, 1, uintptr(unsafe.Pointer(f)))
	return result(r)
}

// WaitForFence is vkWaitForFences for one fence; it reports Timeout as an
// error.
func WaitForFence(dev uintptr, f *uintptr, timeoutNs uint64) error {
	r, _, _ := purego.SyscallN(fn.waitForFences, dev, 1, uintptr(unsafe.Pointer(f)), 1, uintptr(timeoutNs))
	if res := Result(int32(r)); res != Success {
		return res
	}
	return nil
}

// QueueSubmit is vkQueueSubmit of one SubmitInfo.
func QueueSubmit(q uintptr, si *SubmitInfo, fence uintptr) error {
	submits.Add(1)
	r, _, _ := purego.SyscallN(fn.queueSubmit, q, 1, uintptr(unsafe.Pointer(si)), fence)
	return result(r)
}

// CreateQueryPool is vkCreateQueryPool.
func CreateQueryPool(dev uintptr, ci *QueryPoolCreateInfo, out *uintptr) error {
	r, _, _ := purego.SyscallN(fn.createQueryPool, dev, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(out)))
	return created(r)
}

// DestroyQueryPool is vkDestroyQueryPool.
func DestroyQueryPool(dev, p uintptr) {
	purego.SyscallN(fn.destroyQueryPool, dev, p, 0)
	destroyed(1)
}

// CmdResetQueryPool is vkCmdResetQueryPool.
func CmdResetQueryPool(cb, p uintptr, first, count uint32) {
	purego.SyscallN(fn.cmdResetQueryPool, cb, p, uintptr(first), uintptr(count))
}

// CmdWriteTimestamp is vkCmdWriteTimestamp.
func CmdWriteTimestamp(cb uintptr, stage uint32, p uintptr, query uint32) {
	purego.SyscallN(fn.cmdWriteTimestamp, cb, uintptr(stage), p, uintptr(query))
}

// GetQueryPoolResults is vkGetQueryPoolResults of 64-bit results, waiting
// for them.
func GetQueryPoolResults(dev, p uintptr, first uint32, out []uint64) error {
	r, _, _ := purego.SyscallN(fn.getQueryPoolResults, dev, p, uintptr(first), uintptr(len(out)),
		uintptr(len(out)*8), uintptr(unsafe.Pointer(&out[0])), 8, QueryResult64Bit|QueryResultWaitBit)
	return result(r)
}
