package vulkan

import (
	"fmt"
	"os"
	"testing"
)

// TestMain fails the run when the validation layer (enabled with
// ONNXVK_VULKAN_VALIDATION=1) reported anything or a test left a device
// open. Unless PipelineCacheEnv is set, the devices the tests open keep
// their pipeline caches in a folder of the run's own, removed at the end,
// not in the user's cache folder.
func TestMain(m *testing.M) {
	var pipelines string
	if _, ok := os.LookupEnv(PipelineCacheEnv); !ok {
		dir, err := os.MkdirTemp("", "onnxvk-pipelines-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv(PipelineCacheEnv, dir)
		pipelines = dir
	}
	code := m.Run()
	// Destroying the instance makes the validation layer report what the
	// tests left behind, and fails when a test left a device open.
	if err := destroyInstance(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if pipelines != "" {
		os.RemoveAll(pipelines)
	}
	if n := validationMessages.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "vulkan: the validation layer sent %d messages\n", n)
		code = 1
	}
	os.Exit(code)
}
