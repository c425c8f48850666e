package vulkan

import (
	"fmt"
	"slices"
	"strings"
)

// Schedule forces kernel schedules that a device otherwise picks by itself
// from its type and each node's shapes: GPUs take matmul.comp's tiled and
// gemv schedules, convgemm.comp and dwconv.comp, CPU implementations such
// as lavapipe the blocked schedule and conv.comp. The zero Schedule forces
// nothing.
// Tests run every schedule on whatever device they have; timings compare
// them.
type Schedule struct {
	// MatMul is the schedule of every matmul.comp dispatch (MatMul, Gemm,
	// FusedMatMul): "blocked", "tiled" or "gemv" (MatMulSchedules), or ""
	// to pick by device and rows.
	MatMul string
	// GEMVColumns, when positive (a power of two up to 256), is the
	// columns of y per workgroup of the gemv schedule; 0 lets the shape
	// decide (gemvColumns).
	GEMVColumns int64
	// MatrixUnits is "on" or "off": whether the float16 products of
	// the tiled schedule and the float16 convolutions of convgemm.comp run
	// on the device's matrix units (Info.MatrixUnit, which "on" requires);
	// "" takes them wherever the device has them.
	MatrixUnits string
	// MatrixFragments, when positive, is the fragments of the matrix
	// unit's shape that each subgroup on the matrix units computes along
	// each side: 2 (a workgroup's tile of 4M × 4N) or 4 (8M × 8N, where
	// the shared memory holds it); 0 lets the product's size decide
	// (useMatrixUnits).
	MatrixFragments int64
	// MatMulSplits, when positive, is the number of splits of the tiled
	// schedule's depth (split-K with more than 1, as far as the depth
	// allows); 0 lets the shape decide (splitProducts).
	MatMulSplits int
	// Conv is the kernel of Conv and FusedConv: "direct" (conv.comp),
	// "gemm" (convgemm.comp, for groups of at least 16 output channels;
	// narrower ones stay direct) or "depthwise" (dwconv.comp for
	// depthwise convolutions, the rest direct), see ConvSchedules, or ""
	// to pick by device (on GPUs dwconv.comp for depthwise convolutions
	// and convgemm.comp for wide groups, elsewhere conv.comp: on lavapipe
	// dwconv.comp is slower).
	Conv string
	// ConvSplits, when positive, is the number of splits of convgemm.comp's
	// depth (split-K with more than 1, as far as the depth allows); 0 lets
	// the shape decide (convSchedule).
	ConvSplits int
	// Rows is how the row kernels (softmax.comp, layernorm.comp,
	// reduce.comp, argmax.comp) reduce a row among a workgroup's
	// invocations: "subgroup" (subgroup operations, which the device must
	// have: Info.SubgroupArithmetic) or "tree" (a shared-memory tree),
	// see RowSchedules; "" takes subgroup operations where the device has
	// them. The gemv schedule adds its slices' sums the same way, by
	// subgroup shuffles where the device also has them
	// (Info.SubgroupShuffle).
	Rows string
	// Attention is the kernel of Attention: "flash" (flashattn.comp, a
	// tile of query rows a workgroup of 64 invocations, online softmax,
	// no scores in memory), "rows" (attention.comp, a query row a
	// workgroup, its scores in scratch), "split" (flash, and
	// flash-decoding: the keys of few query rows split over workgroups
	// and the chunks combined by a second dispatch, which a decode step
	// of Attention takes too) or "wide" (split, with flashattn.comp's GPU
	// configuration for more than one query row: workgroups of 256
	// invocations, fewer rows a workgroup where the tiles are few, a
	// score's dot product spread over lanes and added by subgroup
	// shuffles, which the device must have: Info.SubgroupShuffle; see
	// flashTiles), see AttentionSchedules; "" takes flash wherever it is
	// exact (lowerAttention), on GPUs wide (split where the device has no
	// subgroup shuffles), on CPU implementations such as lavapipe neither
	// split nor wide. ScaledDotProductAttention has flashattn.comp alone,
	// in any of its configurations.
	Attention string
}

// WithSchedule makes Open force the schedules s names; Open fails on a
// name it does not know.
func WithSchedule(s Schedule) OpenOption { return func(c *openConfig) { c.schedule = s } }

// WithStaging makes Open take a discrete GPU's paths for the data that
// crosses between host and device, on any device: device-local memory is
// never mapped, so weights are uploaded through a staging buffer and a
// submission, and each Run's inputs and outputs go through a staging
// buffer and copies recorded in its command buffer, where a device with
// unified memory (lavapipe, integrated GPUs) would use their mappings.
// Tests use it to run those paths on lavapipe.
func WithStaging() OpenOption { return func(c *openConfig) { c.staging = true } }

// schedules are matmul.comp's schedules by name.
var schedules = []struct {
	name string
	s    matmulSchedule
}{{"blocked", scheduleBlocked}, {"tiled", scheduleTiled}, {"gemv", scheduleGEMV}}

// convKernels are the kernels of Conv by name: whether each takes
// convgemm.comp and dwconv.comp where they apply.
var convKernels = []struct {
	name            string
	gemm, depthwise bool
}{{"direct", false, false}, {"gemm", true, false}, {"depthwise", false, true}}

// rowKernels are the row kernels' reductions by name: whether each
// uses subgroup operations.
var rowKernels = []struct {
	name     string
	subgroup bool
}{{"subgroup", true}, {"tree", false}}

// attentionKernels are the kernels of Attention by name: whether each is
// flashattn.comp, whether it splits the keys of few query rows
// (flash-decoding), and whether it takes flashattn.comp's GPU
// configuration.
var attentionKernels = []struct {
	name               string
	flash, split, wide bool
}{{"flash", true, false, false}, {"rows", false, false, false}, {"split", true, true, false}, {"wide", true, true, true}}

// AttentionSchedules names the kernels of Attention (Schedule.Attention).
func AttentionSchedules() []string {
	var names []string
	for _, k := range attentionKernels {
		names = append(names, k.name)
	}
	return names
}

// RowSchedules names the reductions of the row kernels (Schedule.Rows).
func RowSchedules() []string {
	var names []string
	for _, k := range rowKernels {
		names = append(names, k.name)
	}
	return names
}

// MatMulSchedules names the schedules of matmul.comp (Schedule.MatMul).
func MatMulSchedules() []string {
	var names []string
	for _, s := range schedules {
		names = append(names, s.name)
	}
	return names
}

// ForcedSchedules returns a Schedule forcing each kernel variant and
// schedule a device could pick, one at a time: every matmul.comp schedule
// (MatMulSchedules), each Conv kernel (ConvSchedules), convgemm.comp
// without split-K and with three splits, and the row kernels'
// shared-memory tree (their subgroup reduction is the default where a
// device has it), Attention's row kernel (flash is the default) and
// flash-decoding (the default on GPUs only). Tests run their cases under each on a device that would
// pick only some of them itself.
func ForcedSchedules() []Schedule {
	var out []Schedule
	for _, m := range MatMulSchedules() {
		out = append(out, Schedule{MatMul: m})
	}
	for _, c := range ConvSchedules() {
		out = append(out, Schedule{Conv: c})
	}
	return append(out, Schedule{Conv: "gemm", ConvSplits: 1}, Schedule{Conv: "gemm", ConvSplits: 3}, Schedule{Rows: "tree"}, Schedule{Attention: "rows"}, Schedule{Attention: "split"})
}

// String names the schedules s forces, "device" for none.
func (s Schedule) String() string {
	var parts []string
	if s.MatMul != "" {
		parts = append(parts, "matmul="+s.MatMul)
	}
	if s.GEMVColumns > 0 {
		parts = append(parts, fmt.Sprint("columns=", s.GEMVColumns))
	}
	if s.MatrixUnits != "" {
		parts = append(parts, "units="+s.MatrixUnits)
	}
	if s.MatrixFragments > 0 {
		parts = append(parts, fmt.Sprint("fragments=", s.MatrixFragments))
	}
	if s.MatMulSplits > 0 {
		parts = append(parts, fmt.Sprint("matmul-splits=", s.MatMulSplits))
	}
	if s.Conv != "" {
		parts = append(parts, "conv="+s.Conv)
	}
	if s.ConvSplits > 0 {
		parts = append(parts, fmt.Sprint("splits=", s.ConvSplits))
	}
	if s.Rows != "" {
		parts = append(parts, "rows="+s.Rows)
	}
	if s.Attention != "" {
		parts = append(parts, "attention="+s.Attention)
	}
	if parts == nil {
		return "device"
	}
	return strings.Join(parts, ",")
}

// ConvSchedules names the kernels of Conv (Schedule.Conv).
func ConvSchedules() []string {
	var names []string
	for _, k := range convKernels {
		names = append(names, k.name)
	}
	return names
}

// apply sets d's schedules: those s forces, the device type's choice for
// the rest.
func (s Schedule) apply(d *Device) error {
	gpu := d.info.Type != "cpu"
	d.tiledMatMul, d.tiledConv, d.depthwiseConv = gpu, gpu, gpu
	if s.MatMul != "" {
		i := slices.Index(MatMulSchedules(), s.MatMul)
		if i < 0 {
			return fmt.Errorf("vulkan: no matmul schedule %q (want one of %q)", s.MatMul, MatMulSchedules())
		}
		d.schedule = schedules[i].s
	}
	switch s.MatrixUnits {
	case "", "off":
	case "on":
		if d.info.MatrixUnit[0] == 0 {
			return fmt.Errorf("vulkan: matrix units on: %s has none for fp16 products (VK_KHR_cooperative_matrix, see Info.MatrixUnit)", d.info.Name)
		}
	default:
		return fmt.Errorf("vulkan: matrix units %q: want on, off or \"\"", s.MatrixUnits)
	}
	d.noMatrixUnits = s.MatrixUnits == "off"
	if c := s.GEMVColumns; c < 0 || c > 256 || c&(c-1) != 0 {
		return fmt.Errorf("vulkan: gemv columns %d: want a power of two up to 256, or 0", c)
	}
	d.gemvColumns = s.GEMVColumns
	if f := s.MatrixFragments; f != 0 && f != 2 && f != 4 {
		return fmt.Errorf("vulkan: matrix fragments %d: want 2, 4 or 0", f)
	}
	d.matrixFragments = s.MatrixFragments
	if s.MatMulSplits < 0 {
		return fmt.Errorf("vulkan: matmul splits %d: want 0 or more", s.MatMulSplits)
	}
	d.matmulSplits = s.MatMulSplits
	if s.Conv != "" {
		i := slices.Index(ConvSchedules(), s.Conv)
		if i < 0 {
			return fmt.Errorf("vulkan: no conv schedule %q (want one of %q)", s.Conv, ConvSchedules())
		}
		d.tiledConv, d.depthwiseConv = convKernels[i].gemm, convKernels[i].depthwise
	}
	if s.ConvSplits < 0 {
		return fmt.Errorf("vulkan: conv splits %d: want 0 or more", s.ConvSplits)
	}
	d.convSplits = s.ConvSplits
	d.subgroupRows = d.info.SubgroupArithmetic
	if s.Rows != "" {
		i := slices.Index(RowSchedules(), s.Rows)
		if i < 0 {
			return fmt.Errorf("vulkan: no row schedule %q (want one of %q)", s.Rows, RowSchedules())
		}
		if rowKernels[i].subgroup && !d.info.SubgroupArithmetic {
			return fmt.Errorf("vulkan: row schedule %q: %s has no subgroup arithmetic in compute shaders", s.Rows, d.info.Name)
		}
		d.subgroupRows = rowKernels[i].subgroup
	}
	d.rowAttention, d.splitAttention, d.wideAttention = false, gpu, gpu && d.info.SubgroupShuffle
	if s.Attention != "" {
		i := slices.Index(AttentionSchedules(), s.Attention)
		if i < 0 {
			return fmt.Errorf("vulkan: no attention schedule %q (want one of %q)", s.Attention, AttentionSchedules())
		}
		k := attentionKernels[i]
		if k.wide && !d.info.SubgroupShuffle {
			return fmt.Errorf("vulkan: attention schedule %q: %s has no subgroup shuffles in compute shaders", s.Attention, d.info.Name)
		}
		d.rowAttention, d.splitAttention, d.wideAttention = !k.flash, k.split, k.wide
	}
	return nil
}
