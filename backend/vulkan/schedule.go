package vulkan

import (
	"fmt"
	"slices"
)

// Schedule forces kernel schedules that a device otherwise picks by itself
// from its type and each node's shapes: GPUs take matmul.comp's tiled and
// gemv schedules and convgemm.comp, CPU implementations such as lavapipe
// the blocked schedule and conv.comp. The zero Schedule forces nothing.
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
	// Conv is the kernel of Conv and FusedConv: "direct" (conv.comp) or
	// "gemm" (convgemm.comp, for groups of at least 16 output channels;
	// narrower ones stay direct), see ConvSchedules, or "" to pick by
	// device.
	Conv string
	// ConvSplits, when positive, is the number of splits of convgemm.comp's
	// depth (split-K with more than 1, as far as the depth allows); 0 lets
	// the shape decide (convSchedule).
	ConvSplits int
}

// WithSchedule makes Open force the schedules s names; Open fails on a
// name it does not know.
func WithSchedule(s Schedule) OpenOption { return func(c *openConfig) { c.schedule = s } }

// schedules are matmul.comp's schedules by name.
var schedules = []struct {
	name string
	s    matmulSchedule
}{{"blocked", scheduleBlocked}, {"tiled", scheduleTiled}, {"gemv", scheduleGEMV}}

// convKernels are the kernels of Conv by name: whether each is
// convgemm.comp.
var convKernels = []struct {
	name string
	gemm bool
}{{"direct", false}, {"gemm", true}}

// MatMulSchedules names the schedules of matmul.comp (Schedule.MatMul).
func MatMulSchedules() []string {
	var names []string
	for _, s := range schedules {
		names = append(names, s.name)
	}
	return names
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
	d.tiledMatMul, d.tiledConv = gpu, gpu
	if s.MatMul != "" {
		i := slices.Index(MatMulSchedules(), s.MatMul)
		if i < 0 {
			return fmt.Errorf("vulkan: no matmul schedule %q (want one of %q)", s.MatMul, MatMulSchedules())
		}
		d.schedule = schedules[i].s
	}
	if c := s.GEMVColumns; c < 0 || c > 256 || c&(c-1) != 0 {
		return fmt.Errorf("vulkan: gemv columns %d: want a power of two up to 256, or 0", c)
	}
	d.gemvColumns = s.GEMVColumns
	if s.Conv != "" {
		i := slices.Index(ConvSchedules(), s.Conv)
		if i < 0 {
			return fmt.Errorf("vulkan: no conv schedule %q (want one of %q)", s.Conv, ConvSchedules())
		}
		d.tiledConv = convKernels[i].gemm
	}
	if s.ConvSplits < 0 {
		return fmt.Errorf("vulkan: conv splits %d: want 0 or more", s.ConvSplits)
	}
	d.convSplits = s.ConvSplits
	return nil
}
