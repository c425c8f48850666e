package vulkan

import (
	"fmt"
	"os"
	"testing"
)

// TestMain fails the run when the validation layer (enabled with
// ONNXVK_VULKAN_VALIDATION=1) reported anything.
func TestMain(m *testing.M) {
	code := m.Run()
	if n := validationMessages.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "vulkan: the validation layer sent %d messages\n", n)
		code = 1
	}
	os.Exit(code)
}
