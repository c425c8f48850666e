// Package vulkan is onnxvk's GPU backend: a backend.Device that runs
// kernels compiled to SPIR-V (package shaders) through Vulkan compute,
// called with the purego binding in internal/vk.
//
// A Program records the dispatches of a plan segment into one command
// buffer, once per execution context; a context owns its device-local
// arena (the plan's arena offsets are used as they are), a device-local
// io buffer for the values that enter or leave the segment, with a
// host-visible, cached staging buffer and the copies between the two
// recorded in the same command buffer where the host cannot use io's
// memory directly, descriptor sets and a fence. Contexts are pooled, so
// concurrent Runs each get their own. Views (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity) bind their input's memory and record nothing.
// Weights are constants the device holds (HoldsConstants): the plan has no
// steps for them, and Compile uploads those it has not seen in bulk, into
// shared blocks of device-local memory.
package vulkan

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
)

// Device is one Vulkan device with a compute queue. It implements
// backend.Device.
type Device struct {
	name string
	info Info
	dev  uintptr
	// tiledMatMul selects the GPU schedules of matmul.comp (shared
	// memory); set on GPUs, clear on CPU implementations where shared
	// memory is slow.
	tiledMatMul bool
	// intDot tells that the integer dot product is enabled (see
	// Info.IntegerDotProduct).
	intDot bool
	// staging leaves device-local memory unmapped even where it is
	// host-visible, so that data crosses as on a discrete GPU
	// (WithStaging).
	staging bool
	// schedule, when set, forces one schedule of matmul.comp,
	// gemvColumns, when positive, the columns per workgroup of its gemv
	// schedule, and matmulSplits, when positive, the K splits of its
	// tiled one (see Schedule).
	schedule     matmulSchedule
	gemvColumns  int64
	matmulSplits int
	// tiledConv selects convgemm.comp, the shared-memory schedule of
	// Conv and FusedConv; set on GPUs like tiledMatMul unless a Schedule
	// says otherwise. convSplits, when positive, fixes its number of K
	// splits (split-K); 0 lets convSchedule choose.
	tiledConv  bool
	convSplits int
	// depthwiseConv selects dwconv.comp for depthwise convolutions
	// (see lowerConv); set on GPUs like tiledConv unless a Schedule says
	// otherwise.
	depthwiseConv bool
	// subgroupRows selects the SUBGROUP variants of the row kernels (see
	// Schedule.Rows).
	subgroupRows bool
	// rowAttention selects attention.comp for every Attention,
	// splitAttention flash-decoding and wideAttention flashattn.comp's
	// GPU configuration (see Schedule.Attention).
	rowAttention, splitAttention, wideAttention bool
	// half is the fp16 weight mode (see WithFP16).
	half halfMode
	// matrixUnit is the shape of the matrix units enabled for float16
	// products and convolutions, zero where none are (see
	// enableMatrixUnits; noMatrixUnits keeps them off); matrixFragments,
	// when set, forces their subgroups' fragments a side (see
	// Schedule.MatrixFragments).
	matrixUnit      [3]uint32
	noMatrixUnits   bool
	matrixFragments int64

	// queueMu serializes vkQueueSubmit on the one queue.
	queueMu sync.Mutex
	queue   uintptr

	// memUsed is the device memory allocated now and memLimit its cap (0:
	// none), see SetMemoryLimit.
	memUsed, memLimit atomic.Int64
	// lost is set once the device reported VK_ERROR_DEVICE_LOST.
	lost atomic.Bool

	mu        sync.Mutex
	closed    bool
	modules   map[string]uintptr
	pipelines map[pipelineKey]*pipeline
	// weights holds the resident constants by tensor, in blocks (see
	// makeResident); users counts the programs that bind each, and
	// inBlock the weights resident in each block (see releaseWeights).
	weights  map[*graph.Tensor]weightRef
	blocks   []*buffer
	users    map[weightKey]int
	inBlock  map[*buffer]int
	programs []*program
	// classes are the class programs (see classProgram).
	classes []*classProgram
	// cache is the pipeline cache every pipeline is created through.
	cache pipelineCache

	counters counters
	// tensors holds the memory of DeviceTensors.
	tensors tensorPool
}

// counters are the running totals behind Counters.
type counters struct {
	submits, dispatches, hostDeviceBytes atomic.Int64
}

// Counters returns what the device has done since it was opened: queue
// submissions, dispatches recorded into the command buffers it submitted,
// and bytes copied between host memory and device memory (inputs,
// outputs and weights, staging included).
func (d *Device) Counters() backend.Counters {
	return backend.Counters{Submits: d.counters.submits.Load(), Dispatches: d.counters.dispatches.Load(),
		HostDeviceBytes: d.counters.hostDeviceBytes.Load()}
}

// HoldsConstants reports that the device keeps the plan's constants
// resident: Compile uploads them, so they need no transfer steps.
func (d *Device) HoldsConstants() bool { return true }

var (
	autoOnce sync.Once
	// autoReason is why "auto" has no Vulkan device in this process, or nil.
	autoReason error
)

// Open opens the device named "vulkan" (the default device, see
// DefaultIndex), "vulkan:N" (the N-th device of Devices) or "auto" (see
// AutoIndex; the answer that there is none is remembered for the life of
// the process). It wraps backend.ErrDeviceUnavailable when Vulkan or the
// device is missing. Options such as WithFP16 choose the device's modes.
// The device compiles its pipelines through a pipeline cache loaded from
// the file of its device and driver (see PipelineCacheEnv).
func Open(name string, opts ...OpenOption) (*Device, error) {
	if name == "auto" {
		// Sessions open "auto" often; where it means the CPU, say so
		// without creating an instance every time.
		autoOnce.Do(func() {
			infos, err := Devices()
			if err == nil {
				_, err = AutoIndex(infos)
			}
			autoReason = err
		})
		if autoReason != nil {
			return nil, autoReason
		}
	}
	inst, err := acquireInstance()
	if err != nil {
		return nil, err
	}
	var cfg openConfig
	for _, o := range opts {
		o(&cfg)
	}
	d, err := open(inst, name, cfg)
	if err != nil {
		releaseInstance()
		return nil, err
	}
	return d, nil
}

// findDevice returns the position in infos of the device that id names:
// its index N (of vulkan:N), its UUID (hexadecimal, dashes optional, any
// case) or its name (any case; the first of that name); -1 when none.
func findDevice(infos []Info, id string) int {
	if n, err := strconv.Atoi(id); err == nil {
		for i := range infos {
			if infos[i].Index == n {
				return i
			}
		}
		return -1
	}
	bare := func(u string) string { return strings.ToLower(strings.ReplaceAll(u, "-", "")) }
	for i := range infos {
		if bare(infos[i].UUID) == bare(id) {
			return i
		}
	}
	for i := range infos {
		if strings.EqualFold(infos[i].Name, id) {
			return i
		}
	}
	return -1
}

func open(inst uintptr, name string, cfg openConfig) (*Device, error) {
	infos, err := enumerate(inst)
	if err != nil {
		return nil, err
	}
	index := DefaultIndex(infos)
	if name == "auto" {
		if index, err = AutoIndex(infos); err != nil {
			return nil, err
		}
	} else if rest, ok := strings.CutPrefix(name, "vulkan:"); ok {
		if index = findDevice(infos, rest); index < 0 {
			var have []string
			for _, in := range infos {
				have = append(have, fmt.Sprintf("vulkan:%d %q %s", in.Index, in.Name, in.UUID))
			}
			return nil, backend.Unavailable("vulkan: device %q: no such device (want vulkan:N, a device's name or its UUID; present: %s)", name, strings.Join(have, ", "))
		}
	} else if name != "vulkan" {
		return nil, backend.Unavailable("vulkan: device %q: want auto, vulkan or vulkan:N (N an index, a device's name or its UUID)", name)
	}
	info := infos[index]
	priority := float32(1)
	qci := &vk.DeviceQueueCreateInfo{SType: vk.StructureTypeDeviceQueueCreateInfo, QueueFamilyIndex: info.queueFamily,
		QueueCount: 1, PQueuePriorities: unsafe.Pointer(&priority)}
	dci := &vk.DeviceCreateInfo{SType: vk.StructureTypeDeviceCreateInfo, QueueCreateInfoCount: 1, PQueueCreateInfos: unsafe.Pointer(qci)}
	d := &Device{name: "vulkan:" + strconv.Itoa(info.Index), info: info, modules: map[string]uintptr{},
		pipelines: map[pipelineKey]*pipeline{}, weights: map[*graph.Tensor]weightRef{}, users: map[weightKey]int{}, inBlock: map[*buffer]int{}}
	if err := cfg.schedule.apply(d); err != nil {
		return nil, err
	}
	d.staging = cfg.staging
	var pin runtime.Pinner
	defer pin.Unpin()
	if info.Int16 {
		// The HALF variants of the shaders in halfInt16 declare the Int16
		// capability.
		features := &vk.PhysicalDeviceFeatures{ShaderInt16: 1}
		pin.Pin(features)
		dci.PEnabledFeatures = unsafe.Pointer(features)
	}
	if d.half, err = enableHalf(cfg, info, dci, &pin); err != nil {
		return nil, err
	}
	d.intDot = enableIntegerDot(cfg, info, dci, &pin)
	if d.half.storage {
		d.matrixUnit = enableMatrixUnits(info, d.noMatrixUnits, dci, &pin)
	}
	if err := vk.CreateDevice(info.physical, dci, &d.dev); err != nil {
		return nil, fmt.Errorf("vulkan: vkCreateDevice (%s): %w: %w", info.Name, backend.ErrDeviceUnavailable, err)
	}
	d.queue = vk.GetDeviceQueue(d.dev, info.queueFamily, 0)
	d.openPipelineCache()
	return d, nil
}

// Name returns "vulkan:N".
func (d *Device) Name() string { return d.name }

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// Upload wraps a host tensor as a value of this device; its bytes are
// copied into device memory by the Program that reads it. Weights are
// uploaded once, when a Program that uses them is compiled.
// A tensor this device holds (a DeviceTensor) stays where it is; a
// Resident value of another device is read to the host first.
func (d *Device) Upload(v graph.Value) (graph.Value, error) {
	switch x := v.(type) {
	case *DeviceTensor:
		if x.d == d {
			return x, nil
		}
	case *graph.Tensor:
		return &Tensor{t: x}, nil
	}
	if r, ok := v.(backend.Resident); ok {
		t, err := r.Read()
		if err != nil {
			return nil, err
		}
		return &Tensor{t: t}, nil
	}
	return nil, fmt.Errorf("vulkan: cannot upload a %s to %s", v.ValueType(), d.name)
}

// Download returns the host tensor of a value of this device, reading a
// DeviceTensor from device memory.
func (d *Device) Download(v graph.Value) (graph.Value, error) {
	switch x := v.(type) {
	case *Tensor:
		return x.t, nil
	case *DeviceTensor:
		return x.Read()
	}
	return nil, fmt.Errorf("vulkan: %s holds no %s value to download", d.name, v.ValueType())
}

// Tensor is a tensor value of a Vulkan device, as it crosses from one
// segment of a plan to another. Its bytes are on the host: the device's
// copy lives only while a Program runs.
type Tensor struct {
	t *graph.Tensor
}

// ValueType describes the tensor.
func (t *Tensor) ValueType() *graph.Type { return t.t.ValueType() }

// Close waits for the device to go idle and destroys every Vulkan object
// it created: programs not released yet, pipelines, shader modules,
// weights and the device itself. Before, it saves the pipeline cache when pipelines were created
// since Open; a failure to save is not reported. Runs in progress must
// have returned.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if err := vk.DeviceWaitIdle(d.dev); err != nil {
		errs = append(errs, fmt.Errorf("vulkan: vkDeviceWaitIdle: %w", err))
	}
	for _, p := range d.programs {
		p.destroy()
	}
	for _, c := range d.classes {
		c.destroy()
	}
	for _, pl := range d.pipelines {
		vk.DestroyPipeline(d.dev, pl.pipeline)
		vk.DestroyPipelineLayout(d.dev, pl.layout)
		vk.DestroyDescriptorSetLayout(d.dev, pl.setLayout)
	}
	for _, m := range d.modules {
		vk.DestroyShaderModule(d.dev, m)
	}
	for _, b := range d.blocks {
		b.free(d.dev)
	}
	d.tensors.close(d.dev)
	// A pipeline cache that cannot be saved makes the next process
	// compile its pipelines again; it is no error of Close.
	_ = d.cache.save(d.dev)
	if d.cache.handle != 0 {
		vk.DestroyPipelineCache(d.dev, d.cache.handle)
	}
	d.programs, d.classes, d.pipelines, d.modules, d.weights, d.half.weights, d.blocks, d.users, d.inBlock = nil, nil, nil, nil, nil, nil, nil, nil, nil
	vk.DestroyDevice(d.dev)
	releaseInstance()
	return errors.Join(errs...)
}

// buffer is a VkBuffer with its own memory; mapped is the host view of
// host-visible memory, nil otherwise.
type buffer struct {
	buf, mem uintptr
	size     uint64
	mapped   []byte
	// used is the device's count of allocated memory, which free takes
	// the allocation's memSize back from.
	used    *atomic.Int64
	memSize int64
	// flags are the property flags of the buffer's memory type.
	flags uint32
}

// hostReadable reports whether the host may read and write b through its
// mapping at full speed: host-visible, coherent and cached memory, as on
// unified-memory devices (never a write-combined BAR window).
func (b *buffer) hostReadable() bool {
	const want = vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit | vk.MemoryPropertyHostCachedBit
	return b.mapped != nil && b.flags&want == want
}

// newBuffer creates a storage buffer of size bytes (at least 16, rounded
// up to whole 32-bit words: shaders access 1-byte tensors by words). With
// host set, the memory must be host-visible and coherent, and is cached
// where the device has such a type (staging: the host writes inputs and
// reads results there, which must not be write-combined memory);
// otherwise it is device-local, and mapped anyway when that memory is
// also host-visible and coherent.
func (d *Device) newBuffer(size uint64, host bool) (*buffer, error) {
	size = max((size+3)&^3, 16)
	b := &buffer{size: size}
	ci := &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: size,
		Usage:       vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit,
		SharingMode: vk.SharingModeExclusive}
	if err := vk.CreateBuffer(d.dev, ci, &b.buf); err != nil {
		return nil, fmt.Errorf("vulkan: vkCreateBuffer (%d bytes): %w", size, err)
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, b.buf, &req)
	const hostBits = vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
	var prefs []uint32
	if host {
		prefs = []uint32{hostBits | vk.MemoryPropertyHostCachedBit, hostBits}
	} else {
		prefs = []uint32{vk.MemoryPropertyDeviceLocalBit, 0}
	}
	typeIndex := -1
	m := &d.info.memory
	for _, want := range prefs {
		for i := range m.MemoryTypeCount {
			if req.MemoryTypeBits&(1<<i) != 0 && m.MemoryTypes[i].PropertyFlags&want == want {
				typeIndex = int(i)
				break
			}
		}
		if typeIndex >= 0 {
			break
		}
	}
	if typeIndex < 0 {
		vk.DestroyBuffer(d.dev, b.buf)
		return nil, fmt.Errorf("vulkan: no memory type for a %d-byte buffer (host-visible: %v)", size, host)
	}
	if err := d.reserve(int64(req.Size)); err != nil {
		vk.DestroyBuffer(d.dev, b.buf)
		return nil, err
	}
	ai := &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size, MemoryTypeIndex: uint32(typeIndex)}
	if err := vk.AllocateMemory(d.dev, ai, &b.mem); err != nil {
		d.memUsed.Add(-int64(req.Size))
		vk.DestroyBuffer(d.dev, b.buf)
		return nil, fmt.Errorf("vulkan: vkAllocateMemory (%d bytes): %w", req.Size, err)
	}
	b.used, b.memSize, b.flags = &d.memUsed, int64(req.Size), m.MemoryTypes[typeIndex].PropertyFlags
	if err := vk.BindBufferMemory(d.dev, b.buf, b.mem, 0); err != nil {
		b.free(d.dev)
		return nil, fmt.Errorf("vulkan: vkBindBufferMemory: %w", err)
	}
	if m.MemoryTypes[typeIndex].PropertyFlags&hostBits == hostBits && (host || !d.staging) {
		var p unsafe.Pointer
		if err := vk.MapMemory(d.dev, b.mem, &p); err != nil {
			b.free(d.dev)
			return nil, fmt.Errorf("vulkan: vkMapMemory: %w", err)
		}
		b.mapped = unsafe.Slice((*byte)(p), size)
	}
	return b, nil
}

func (b *buffer) free(dev uintptr) {
	vk.DestroyBuffer(dev, b.buf)
	vk.FreeMemory(dev, b.mem)
	b.used.Add(-b.memSize)
}

// commands is a command pool with one primary command buffer and a fence.
type commands struct {
	pool, cmd, fence uintptr
	submitInfo       *vk.SubmitInfo
}

func (d *Device) newCommands() (*commands, error) {
	c := &commands{}
	pci := &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: d.info.queueFamily}
	if err := vk.CreateCommandPool(d.dev, pci, &c.pool); err != nil {
		return nil, fmt.Errorf("vulkan: vkCreateCommandPool: %w", err)
	}
	ai := &vk.CommandBufferAllocateInfo{SType: vk.StructureTypeCommandBufferAllocateInfo, CommandPool: c.pool,
		Level: vk.CommandBufferLevelPrimary, CommandBufferCount: 1}
	if err := vk.AllocateCommandBuffers(d.dev, ai, &c.cmd); err != nil {
		vk.DestroyCommandPool(d.dev, c.pool)
		return nil, fmt.Errorf("vulkan: vkAllocateCommandBuffers: %w", err)
	}
	if err := vk.CreateFence(d.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}, &c.fence); err != nil {
		vk.DestroyCommandPool(d.dev, c.pool)
		return nil, fmt.Errorf("vulkan: vkCreateFence: %w", err)
	}
	c.submitInfo = &vk.SubmitInfo{SType: vk.StructureTypeSubmitInfo, CommandBufferCount: 1, PCommandBuffers: unsafe.Pointer(&c.cmd)}
	return c, nil
}

func (c *commands) destroy(dev uintptr) {
	vk.DestroyFence(dev, c.fence)
	vk.DestroyCommandPool(dev, c.pool)
}

// submit runs c's command buffer and waits for it to finish.
func (d *Device) submit(c *commands) error {
	d.counters.submits.Add(1)
	d.queueMu.Lock()
	err := vk.QueueSubmit(d.queue, c.submitInfo, c.fence)
	d.queueMu.Unlock()
	if err != nil {
		return fmt.Errorf("vulkan: vkQueueSubmit: %w", err)
	}
	if err := vk.WaitForFence(d.dev, &c.fence, ^uint64(0)); err != nil {
		return fmt.Errorf("vulkan: vkWaitForFences: %w", err)
	}
	if err := vk.ResetFence(d.dev, &c.fence); err != nil {
		return fmt.Errorf("vulkan: vkResetFences: %w", err)
	}
	return nil
}
