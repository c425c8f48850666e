package vulkan

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
	"github.com/onnxvk/onnxvk/shaders"
)

// maxGroups is the most workgroups a dispatch gets along x: the least
// maxComputeWorkGroupCount[0] the Vulkan spec allows (program.go also caps
// it at the device's).
const maxGroups = 65535

// workgroupSize is local_size_x of every shader.
const workgroupSize = 256

// serialRowLen is the longest row that the row kernels (argmax.comp,
// reduce.comp, layernorm.comp, softmax.comp) give one invocation rather than a
// workgroup: a workgroup's 256 invocations and its shared-memory tree
// would mostly idle on it, and a tensor of many short rows ([70000, 2]
// reduced along its last axis) would take as many workgroups.
const serialRowLen = 32

// rowGroups returns the workgroups a row kernel dispatches for rows rows
// of length elements each, and its serial flag: 1 where each invocation
// reduces a row of its own (length up to serialRowLen), 0 where each
// workgroup does.
func (c caps) rowGroups(rows, length int64) (groups int64, serial uint32) {
	if length <= serialRowLen {
		width := c.rowWorkgroup
		if width == 0 {
			width = workgroupSize
		}
		return (rows + width - 1) / width, 1
	}
	return rows, 0
}

// maxRank is the highest rank binary.comp broadcasts over.
const maxRank = 8

// unaryOps and binaryOps map ONNX ops to the op codes of unary.glsl and
// binary.glsl (the OP specialization constant of unary.comp and
// binary.comp, and chain.comp's op codes): the shaders' constants U_NAME
// and B_NAME, NAME the op's name in capitals, are the one statement of the
// codes.
var (
	unaryOps  = shaderOps("unary.glsl", "U_", ops.Names(graph.DefaultDomain))
	binaryOps = shaderOps("binary.glsl", "B_", ops.Names(graph.DefaultDomain))
)

// shaderOps returns the constants PREFIXNAME of the shader include file
// by the name among names that NAME spells in capitals; a constant that
// matches no name is left out (TestShaderOpCodes fails on it). It panics
// when the file declares no constant: the includes are embedded in the
// build.
func shaderOps(file, prefix string, names []string) map[string]int32 {
	codes, err := shaders.Constants(file, prefix)
	if err != nil {
		panic(err)
	}
	out := map[string]int32{}
	for _, name := range names {
		if code, ok := codes[strings.ToUpper(name)]; ok {
			out[name] = code
		}
	}
	return out
}

// unaryAttrs names the float attributes that unary.glsl reads as an op's
// alpha and beta; an absent one takes its schema's default.
var unaryAttrs = map[string][]string{
	"LeakyRelu": {"alpha"}, "Elu": {"alpha"}, "Selu": {"alpha", "gamma"}, "HardSigmoid": {"alpha", "beta"},
	"ThresholdedRelu": {"alpha"}, "Celu": {"alpha"}, "Shrink": {"lambd", "bias"}, "Swish": {"alpha"},
}

// slot names an input (In) or output of a node bound to a shader binding;
// the input paramsSlot is the launch's params.
type slot struct {
	out bool
	k   int
}

// paramsSlot is the k of the slot that binds launch.params, uploaded with
// the weights.
const paramsSlot = -1

// isParams tells the slot that binds the launch's params.
func (s slot) isParams() bool { return !s.out && s.k == paramsSlot }

// scratchSlot is the k of the slots that bind the launch's scratch: out
// where a dispatch writes it, not out where it reads it.
const scratchSlot = -2

// isScratch tells a slot that binds the launch's scratch.
func (s slot) isScratch() bool { return s.k == scratchSlot }

// launch is one node lowered to a shader dispatch.
type launch struct {
	shader string
	// rowsOfBatch marks a matmul.comp product whose batch is rows of its
	// a (matmulGeom.foldBatch).
	rowsOfBatch bool
	// op is the shader's specialization constant 0.
	op       int32
	bindings []slot
	push     []byte
	// elems is the number of elements of output 0.
	elems int64
	// outShapes holds the shape of each output the kernel can write.
	outShapes [][]int64
	// groups is the number of workgroups wanted; 0 means one invocation
	// per output element.
	groups int64
	// rawInputs lists the inputs bound with their own element type; every
	// other bound input must be float32 (float16 on a HALF variant, see
	// toHalf).
	rawInputs []int
	// outTypes holds the element type of each output; nil means float32
	// for all (float16 on a HALF variant, see toHalf).
	outTypes []graph.DType
	// halfInputs lists the constant float32 inputs bound as fp16 weights
	// (see useHalfWeights).
	halfInputs []int
	// params, when set, is what a paramsSlot binds: data the shader reads
	// that does not fit its push constants, made resident like a weight.
	params *graph.Tensor
	// then holds further dispatches of the node, recorded in order after
	// this one; only their shader, op, bindings, push, elems and groups
	// are used.
	then []*launch
	// subgroup runs the SUBGROUP variant of the shader, NAME_sg.spv (see
	// subgroupShaders and flashTiles).
	subgroup bool
	// workgroup, when positive, is the workgroup width (specialization
	// constant 1) of a SUBGROUP variant, in place of rowWorkgroup's, or
	// of a matrix-unit shader (matrixShaders).
	workgroup int64
	// specs holds the shader's specialization constants from 2 on (a
	// matrix-unit shader's unit shape and fragments).
	specs []int32
	// scratch is the bytes of device memory the node's dispatches share
	// through scratchSlot bindings, such as split-K's partial sums: valid
	// from the node's first dispatch to its last, shared with other
	// nodes' scratch (the barriers order their uses).
	scratch uint64
}

// parts returns l and the launches of l.then: every dispatch of the node.
func (l *launch) parts() []*launch {
	return append([]*launch{l}, l.then...)
}

// outType returns the element type of output k.
func (l *launch) outType(k int) graph.DType {
	if k < len(l.outTypes) {
		return l.outTypes[k]
	}
	return graph.Float
}

// caps is what lowering needs to know about the device.
type caps struct {
	// maxElems is the most elements a bound tensor may have.
	maxElems int64
	// tiledMatMul tells that the device is a GPU: matmul.comp's GPU
	// schedules (see caps.matmulSchedule).
	tiledMatMul bool
	// schedule, when set, is the schedule of every matmul.comp launch,
	// and gemvColumns, when positive, the columns per workgroup of its
	// gemv schedule (see Schedule).
	schedule    matmulSchedule
	gemvColumns int64
	// matmulSplits, when positive, fixes the K splits of matmul.comp's
	// tiled schedule (see splitProducts).
	matmulSplits int
	// tiledConv selects convgemm.comp for Conv and FusedConv;
	// convSplits, when positive, fixes its K splits (see Device).
	tiledConv  bool
	convSplits int
	// depthwiseConv selects dwconv.comp for depthwise convolutions.
	depthwiseConv bool
	// halfWeights selects the fp16-weight shader variants (see WithFP16).
	halfWeights bool
	// half16 tells that the device has 16-bit storage enabled: nodes of
	// float16 tensors run on the HALF shader variants (see halfShaders).
	half16 bool
	// int16 tells that the device has shaderInt16 enabled (see halfInt16).
	int16 bool
	// intDot tells that the device has the integer dot product enabled
	// (see Info.IntegerDotProduct).
	intDot bool
	// subgroupRows selects the SUBGROUP variants of the row kernels (see
	// subgroupShaders), and rowWorkgroup, when positive, is their
	// workgroup's width, where it is not workgroupSize (see
	// rowWorkgroup).
	subgroupRows bool
	rowWorkgroup int64
	// shuffledGEMV selects the SUBGROUP variant of matmul.comp for the
	// gemv schedule: the slices of k that share a subgroup add their sums
	// by subgroup shuffles before the rest go through shared memory.
	shuffledGEMV bool
	// rowAttention forces attention.comp for Attention (see
	// Schedule.Attention); splitAttention lets flashattn.comp split the
	// keys of few query rows over workgroups (flash-decoding, see
	// flashGeom.params); sharedMem is the device's
	// maxComputeSharedMemorySize, which flashattn.comp must fit.
	rowAttention   bool
	splitAttention bool
	// wideAttention selects flashattn.comp's GPU configuration, its
	// SUBGROUP variant (see flashTiles), on a device whose subgroups are
	// subgroupSize wide.
	wideAttention bool
	subgroupSize  int64
	sharedMem     int64
	// matrixUnit, where set, is the shape of the matrix units the tiled
	// schedule's float16 products and convgemm's float16 convolutions run
	// on, and matrixFragments, where set, the fragments a side their
	// subgroups compute (see useMatrixUnits).
	matrixUnit      [3]uint32
	matrixFragments int64
}

// query is what lowering knows of a node.
type query struct {
	n     *graph.Node
	opset int64
	// shapes holds the shape of each input, nil where absent.
	shapes [][]int64
	// elems holds the element type of each input.
	elems []graph.DType
	// consts holds the value of each input fixed at plan time, nil
	// elsewhere (see planner.Query).
	consts []*graph.Tensor
	caps
}

// constInts returns the integers of input k when it is a constant integer
// tensor; ok is false otherwise.
func (q *query) constInts(k int) (v []int64, ok bool) {
	if k >= len(q.consts) || q.consts[k] == nil {
		return nil, false
	}
	v, err := q.consts[k].Int64s()
	return v, err == nil
}

// lowerFunc lowers a node to a dispatch; ok is false when the kernel does
// not handle its attributes, shapes or types.
type lowerFunc func(q *query) (l *launch, ok bool)

// lowerers holds the kernels registered by op name (default domain).
var lowerers = map[string]lowerFunc{}

// register adds the kernel of op; it panics on a duplicate.
func register(op string, f lowerFunc) {
	if _, dup := lowerers[op]; dup {
		panic("vulkan: kernel " + op + " registered twice")
	}
	lowerers[op] = f
}

// fusedLowerers holds the kernels of the planner's fused nodes (domain
// ops.FusedDomain) by op name.
var fusedLowerers = map[string]lowerFunc{}

// registerFused adds the kernel of the fused op; it panics on a duplicate.
func registerFused(op string, f lowerFunc) {
	if _, dup := fusedLowerers[op]; dup {
		panic("vulkan: fused kernel " + op + " registered twice")
	}
	fusedLowerers[op] = f
}

// HasKernel reports whether the device has a kernel for op in domain (the
// default one or ops.FusedDomain): a registered one, or unary.comp,
// binary.comp or clip.comp. Whether it runs a given node also depends on
// its types, attributes and shapes (Supports).
func HasKernel(domain, op string) bool {
	switch domain {
	case ops.FusedDomain:
		_, ok := fusedLowerers[op]
		return ok
	case graph.DefaultDomain:
		_, reg := lowerers[op]
		_, un := unaryOps[op]
		_, bin := binaryOps[op]
		return reg || un || bin || op == "Clip"
	}
	return false
}

// takesEmpty lists the kernels that take empty runtime inputs (and bind
// none of them): Concat skips an empty part, as a decoder's first step
// concatenates an empty cache.
var takesEmpty = map[string]bool{"Concat": true}

// lower maps the node of pq to a dispatch; ok is false when no kernel
// handles it, when the node names an output the kernel does not bind, or
// when the kernel binds an input of a type it does not declare.
func lower(pq planner.Query, c caps) (*launch, bool) {
	n := pq.Node
	if n.Domain != graph.DefaultDomain && n.Domain != ops.FusedDomain || len(n.Outputs) == 0 || n.Outputs[0] == "" || len(pq.Inputs) == 0 || pq.Inputs[0] == nil {
		return nil, false
	}
	q := &query{n: n, opset: pq.Opset, shapes: make([][]int64, len(pq.Inputs)), elems: make([]graph.DType, len(pq.Inputs)),
		consts: make([]*graph.Tensor, len(pq.Inputs)), caps: c}
	copy(q.consts, pq.Consts)
	for i, t := range pq.Inputs {
		if t == nil {
			continue
		}
		if t.Kind != graph.TensorKind || t.Shape == nil || !t.Shape.Known() {
			return nil, false
		}
		q.shapes[i], q.elems[i] = t.Shape.Ints(), t.Elem
		if e := graph.NumElements(q.shapes[i]); e > c.maxElems || e <= 0 && q.consts[i] == nil && !takesEmpty[n.OpType] {
			return nil, false
		}
	}
	l, ok := lowerAny(q)
	if !ok || l.elems <= 0 || l.elems > c.maxElems {
		return nil, false
	}
	useHalfWeights(q, l)
	if !toHalf(q, l) {
		return nil, false
	}
	for _, part := range l.parts() {
		if subgroupShaders[strings.TrimSuffix(part.shader, halfSuffix)] {
			part.subgroup = c.subgroupRows
		}
	}
	float := graph.Float
	if strings.HasSuffix(l.shader, halfSuffix) {
		float = graph.Float16
	}
	bound := make([]bool, len(n.Outputs))
	for _, part := range l.parts() {
		for _, s := range part.bindings {
			switch {
			case s.isScratch():
				if l.scratch == 0 {
					return nil, false
				}
			case s.out && s.k < len(bound):
				bound[s.k] = true
			case s.isParams():
				if l.params == nil {
					return nil, false
				}
			case !s.out && q.elems[s.k] != float && !slices.Contains(l.rawInputs, s.k):
				return nil, false
			}
		}
	}
	for k, o := range n.Outputs {
		if o != "" && !bound[k] {
			return nil, false
		}
	}
	return l, true
}

// lowerAny lowers q with a registered kernel (a fused one for a node of
// ops.FusedDomain) or, where none accepts it, one of unary.comp,
// binary.comp and clip.comp.
func lowerAny(q *query) (l *launch, ok bool) {
	n, shapes := q.n, q.shapes
	if n.Domain == ops.FusedDomain {
		f, ok := fusedLowerers[n.OpType]
		if !ok {
			return nil, false
		}
		return f(q)
	}
	if f, ok := lowerers[n.OpType]; ok {
		if l, ok := f(q); ok {
			return l, true
		}
	}
	if code, ok := unaryOps[n.OpType]; ok && len(shapes) == 1 {
		var params [2]float32
		for i, name := range unaryAttrs[n.OpType] {
			params[i] = ops.AttrFloat(n, q.opset, name)
		}
		alpha, beta := params[0], params[1]
		if n.OpType == "Gelu" {
			switch ops.Params[ops.GeluParams](n, q.opset).Approximate {
			case "none":
			case "tanh":
				alpha = 1
			default:
				return nil, false
			}
		}
		elems := graph.NumElements(shapes[0])
		return &launch{shader: "unary", op: code, bindings: []slot{{false, 0}, {true, 0}},
			push: words(uint32(elems), math.Float32bits(alpha), math.Float32bits(beta)), elems: elems, outShapes: [][]int64{shapes[0]}}, true
	}
	if n.OpType == "Clip" {
		return lowerClip(q)
	}
	if code, ok := binaryOps[n.OpType]; ok && len(shapes) == 2 && shapes[1] != nil && q.opset >= 7 {
		out, ok := broadcast(shapes[0], shapes[1])
		if !ok || len(out) > maxRank || (n.OpType == "PRelu" && len(out) != len(shapes[0])) || (n.OpType == "Mod" && ops.Params[ops.ModParams](n, q.opset).Fmod == 0) {
			return nil, false
		}
		elems := graph.NumElements(out)
		vals := []uint32{uint32(elems), uint32(len(out))}
		dims, sa, sb := make([]uint32, maxRank), make([]uint32, maxRank), make([]uint32, maxRank)
		sa0, sb0 := strides(shapes[0], out), strides(shapes[1], out)
		for i, d := range out {
			dims[i], sa[i], sb[i] = uint32(d), uint32(sa0[i]), uint32(sb0[i])
		}
		vals = append(append(append(vals, dims...), sa...), sb...)
		return &launch{shader: "binary", op: code, bindings: []slot{{false, 0}, {false, 1}, {true, 0}},
			push: words(vals...), elems: elems, outShapes: [][]int64{out}}, true
	}
	return nil, false
}

func lowerClip(q *query) (*launch, bool) {
	shapes := q.shapes
	lo, hi := float32(-math.MaxFloat32), float32(math.MaxFloat32)
	var flags uint32
	bindings := []slot{{false, 0}, {true, 0}, {false, 0}, {false, 0}}
	if len(shapes) > 3 {
		return nil, false
	}
	for k := 1; k < len(shapes); k++ {
		if shapes[k] == nil {
			continue
		}
		if graph.NumElements(shapes[k]) != 1 {
			return nil, false
		}
		flags |= 1 << (k - 1)
		bindings[k+1] = slot{false, k}
	}
	elems := graph.NumElements(shapes[0])
	return &launch{shader: "clip", bindings: bindings, push: words(uint32(elems), flags, math.Float32bits(lo), math.Float32bits(hi)),
		elems: elems, outShapes: [][]int64{shapes[0]}}, true
}

// broadcast returns the numpy broadcast of two shapes.
func broadcast(a, b []int64) ([]int64, bool) {
	r := max(len(a), len(b))
	out := make([]int64, r)
	for i := range r {
		da, db := int64(1), int64(1)
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// strides returns the element strides of shape s read as the broadcast
// shape out: 0 along broadcast dimensions.
func strides(s, out []int64) []int64 {
	st := make([]int64, len(out))
	step := int64(1)
	for i := len(out) - 1; i >= 0; i-- {
		j := i - (len(out) - len(s))
		if j < 0 {
			continue
		}
		if s[j] != 1 {
			st[i] = step
		}
		step *= s[j]
	}
	return st
}

func words(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// subgroupShaders lists the row kernels compiled with SUBGROUP as
// NAME_sg.spv and NAME_f16_sg.spv (see shaders/subgroup.glsl): they
// reduce a row within each subgroup, then combine the subgroups' partial
// results after one barrier, where the others reduce it in a
// shared-memory tree.
var subgroupShaders = map[string]bool{"softmax": true, "layernorm": true, "reduce": true, "argmax": true}

// subgroupSuffix names a shader's SUBGROUP variant.
const subgroupSuffix = "_sg"

// rowWorkgroup returns the workgroup width of the SUBGROUP variants of
// the row kernels on a device whose subgroups are subgroupSize wide:
// eight subgroups, at most workgroupSize (256 on GPUs whose subgroups are
// 32 or 64 wide, 64 on lavapipe's 8, where fewer invocations wait at each
// barrier); workgroupSize where the device reports no size. The shaders
// take it as specialization constant 1.
func rowWorkgroup(subgroupSize uint32) int64 {
	if subgroupSize == 0 {
		return workgroupSize
	}
	return min(workgroupSize, 8*int64(subgroupSize))
}

// pipelineKey identifies a compute pipeline: a shader, its variant, its
// OP constant, its workgroup width (launch.workgroup) and its further
// constants (launch.specs, up to 4).
type pipelineKey struct {
	shader    string
	subgroup  bool
	op        int32
	workgroup int64
	specs     [4]int32
}

// pipeline is a compute pipeline with its layouts.
type pipeline struct {
	setLayout, layout, pipeline uintptr
	bindings                    int
	// writes tells, per binding, whether the shader writes it.
	writes []bool
}

// pipelineFor returns the pipeline of l's shader and op, creating it on
// first use. d.mu must be held.
func (d *Device) pipelineFor(l *launch) (*pipeline, error) {
	key := pipelineKey{shader: l.shader, subgroup: l.subgroup, op: l.op, workgroup: l.workgroup}
	if len(l.specs) > len(key.specs) {
		return nil, fmt.Errorf("vulkan: %s: %d specialization constants past the workgroup, want at most %d", l.shader, len(l.specs), len(key.specs))
	}
	copy(key.specs[:], l.specs)
	if p, ok := d.pipelines[key]; ok {
		return p, nil
	}
	name := l.shader
	if l.subgroup {
		name += subgroupSuffix
	}
	module, err := d.module(name)
	if err != nil {
		return nil, err
	}
	p := &pipeline{bindings: len(l.bindings)}
	for _, s := range l.bindings {
		p.writes = append(p.writes, s.out)
	}
	binds := make([]vk.DescriptorSetLayoutBinding, p.bindings)
	for i := range binds {
		binds[i] = vk.DescriptorSetLayoutBinding{Binding: uint32(i), DescriptorType: vk.DescriptorTypeStorageBuffer,
			DescriptorCount: 1, StageFlags: vk.ShaderStageComputeBit}
	}
	sci := &vk.DescriptorSetLayoutCreateInfo{SType: vk.StructureTypeDescriptorSetLayoutCreateInfo,
		BindingCount: uint32(len(binds)), PBindings: unsafe.Pointer(&binds[0])}
	if err := vk.CreateDescriptorSetLayout(d.dev, sci, &p.setLayout); err != nil {
		return nil, fmt.Errorf("vulkan: vkCreateDescriptorSetLayout: %w", err)
	}
	push := &vk.PushConstantRange{StageFlags: vk.ShaderStageComputeBit, Size: uint32(len(l.push))}
	lci := &vk.PipelineLayoutCreateInfo{SType: vk.StructureTypePipelineLayoutCreateInfo, SetLayoutCount: 1,
		PSetLayouts: unsafe.Pointer(&p.setLayout), PushConstantRangeCount: 1, PPushConstantRanges: unsafe.Pointer(push)}
	if err := vk.CreatePipelineLayout(d.dev, lci, &p.layout); err != nil {
		vk.DestroyDescriptorSetLayout(d.dev, p.setLayout)
		return nil, fmt.Errorf("vulkan: vkCreatePipelineLayout: %w", err)
	}
	// Constant 0 is the op; 1 the workgroup width, where the shader
	// takes it; 2 on the specs.
	consts := []int32{l.op}
	if l.subgroup || l.workgroup > 0 {
		consts = append(consts, int32(rowWorkgroup(d.info.SubgroupSize)))
		if l.workgroup > 0 {
			consts[1] = int32(l.workgroup)
		}
		consts = append(consts, l.specs...)
	}
	entries := make([]vk.SpecializationMapEntry, len(consts))
	for i := range entries {
		entries[i] = vk.SpecializationMapEntry{ConstantID: uint32(i), Offset: uint32(4 * i), Size: 4}
	}
	n := uint32(len(consts))
	spec := &vk.SpecializationInfo{MapEntryCount: n, PMapEntries: unsafe.Pointer(&entries[0]), DataSize: uintptr(4 * n), PData: unsafe.Pointer(&consts[0])}
	main := vk.Cstr("main")
	ci := &vk.ComputePipelineCreateInfo{SType: vk.StructureTypeComputePipelineCreateInfo, Layout: p.layout,
		Stage: vk.PipelineShaderStageCreateInfo{SType: vk.StructureTypePipelineShaderStageCreateInfo,
			Stage: vk.ShaderStageComputeBit, Module: module, PName: unsafe.Pointer(&main[0]), PSpecializationInfo: unsafe.Pointer(spec)}}
	if fullSubgroups(name) {
		ci.Stage.Flags = vk.PipelineShaderStageCreateRequireFullSubgroupsBit
	}
	if err := vk.CreateComputePipeline(d.dev, d.cache.handle, ci, &p.pipeline); err != nil {
		vk.DestroyPipelineLayout(d.dev, p.layout)
		vk.DestroyDescriptorSetLayout(d.dev, p.setLayout)
		return nil, fmt.Errorf("vulkan: vkCreateComputePipelines (%s, op %d): %w", name, l.op, err)
	}
	d.cache.created = true
	d.pipelines[key] = p
	return p, nil
}

// module returns the shader module of the named shader. d.mu must be held.
func (d *Device) module(name string) (uintptr, error) {
	if m, ok := d.modules[name]; ok {
		return m, nil
	}
	code, err := shaders.SPIRV(name)
	if err != nil {
		return 0, fmt.Errorf("vulkan: %w", err)
	}
	ci := &vk.ShaderModuleCreateInfo{SType: vk.StructureTypeShaderModuleCreateInfo, CodeSize: uintptr(4 * len(code)), PCode: unsafe.Pointer(&code[0])}
	var m uintptr
	if err := vk.CreateShaderModule(d.dev, ci, &m); err != nil {
		return 0, fmt.Errorf("vulkan: vkCreateShaderModule (%s): %w", name, err)
	}
	d.modules[name] = m
	return m, nil
}
