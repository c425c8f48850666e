package vulkan

import (
	"testing"

	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// withoutIntegerDot makes Open leave the integer dot product off.
func withoutIntegerDot() OpenOption { return func(c *openConfig) { c.noIntegerDot = true } }

// TestIntegerDotOff runs the kernel-table cases that the default device
// lowers to integer_dot.spv (MatMulInteger of a constant B, K a multiple
// of 4; TestKernels runs them so) on a device opened with the integer dot
// product off, which lowers them to integer.comp's plain path: both paths
// must match the CPU.
func TestIntegerDotOff(t *testing.T) {
	base := openTest(t)
	if !base.intDot {
		testenv.Skip(t, base.Name()+" has no integer dot product (VK_KHR_shader_integer_dot_product)")
	}
	d, err := Open("vulkan", withoutIntegerDot())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	differ := newCases(d.caps(), base.caps())
	picked := 0
	only := func(c kerneltest.Case) bool {
		if differ(c) {
			picked++
			return true
		}
		return false
	}
	kerneltest.Suite{Device: d, Mode: kerneltest.FP32, Declines: "vulkan", Only: only}.Run(t)
	if picked == 0 {
		t.Fatal("no case of the table reaches integer_dot.spv")
	}
	t.Logf("%d cases on the plain path", picked)
}
