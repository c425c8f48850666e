package kerneltest

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestCPU runs the table on the CPU device, planned and executed, against
// its own kernels called directly: the executor's arena, the kernels'
// plan caches for constant inputs (packed weights) and, under the noasm
// build tag, the portable Go kernels in place of the assembly ones.
func TestCPU(t *testing.T) {
	Suite{Device: hostfallback.NewDevice(nil), Mode: FP32, Declines: "cpu", Sample: testenv.NewSampler(2)}.Run(t)
	CheckCasesUnchanged(t)
}

// TestCPUFloat16 runs the table's cases of the nodes the planner's fusion
// makes (ops.FusedDomain) on the CPU device in the Float16 mode: the
// planner fuses float16 patterns for the CPU as for a GPU, and the CPU
// kernels compute them in float32 from the float16 operands and round the
// result once, so each result must lie within the op's float16 tolerance
// of the fp32 reference.
func TestCPUFloat16(t *testing.T) {
	fused := func(c Case) bool { return c.Node.Domain == ops.FusedDomain }
	Suite{Device: hostfallback.NewDevice(nil), Mode: Float16, Declines: "cpu", Only: fused, Sample: testenv.NewSampler(2)}.Run(t)
	CheckCasesUnchanged(t)
}
