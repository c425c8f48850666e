package vulkan

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
)

// TestNoDriver runs this test binary again with VK_DRIVER_FILES pointing
// nowhere: opening a device must fail with ErrDeviceUnavailable, not crash.
func TestNoDriver(t *testing.T) {
	if os.Getenv("ONNXVK_TEST_NO_DRIVER") == "1" {
		_, err := Open("vulkan")
		if !errors.Is(err, backend.ErrDeviceUnavailable) {
			t.Fatalf("Open without a driver: %v, want ErrDeviceUnavailable", err)
		}
		_, err = Devices()
		if !errors.Is(err, backend.ErrDeviceUnavailable) {
			t.Fatalf("Devices without a driver: %v, want ErrDeviceUnavailable", err)
		}
		t.Log(err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDriver$", "-test.v")
	cmd.Env = append(os.Environ(), "ONNXVK_TEST_NO_DRIVER=1", ValidationEnv+"=0", "VK_DRIVER_FILES=/nonexistent", "VK_ICD_FILENAMES=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("without a driver: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "device unavailable") {
		t.Fatalf("no reason in the output:\n%s", out)
	}
	t.Logf("%s", out)
}
