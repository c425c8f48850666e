package kerneltest

import (
	"testing"

	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestCPU runs the table on the CPU device, planned and executed, against
// its own kernels called directly: the executor's arena, the kernels'
// plan caches for constant inputs (packed weights) and, under the noasm
// build tag, the portable Go kernels in place of the assembly ones.
func TestCPU(t *testing.T) {
	Suite{Device: hostfallback.NewDevice(nil), Mode: FP32, Declines: "cpu", Sample: testenv.NewSampler(2)}.Run(t)
}
