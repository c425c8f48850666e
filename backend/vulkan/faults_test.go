package vulkan

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// TestFaultClassifies checks that Vulkan results map to the backend
// sentinels and that a lost device refuses later work.
func TestFaultClassifies(t *testing.T) {
	d := openTest(t)
	for _, r := range []int32{vk.ErrorOutOfHostMemory, vk.ErrorOutOfDeviceMemory} {
		err := d.fault(fmt.Errorf("vulkan: vkAllocateMemory (64 bytes): %w", vk.Result(r)))
		if !errors.Is(err, backend.ErrOutOfMemory) || errors.Is(err, backend.ErrDeviceLost) {
			t.Errorf("%v: not only ErrOutOfMemory", err)
		}
	}
	if err := d.fault(fmt.Errorf("x: %w", vk.Result(vk.ErrorIncompatibleDriver))); errors.Is(err, backend.ErrOutOfMemory) || errors.Is(err, backend.ErrDeviceLost) {
		t.Errorf("%v classified as a fault", err)
	}
	if d.checkLost() != nil {
		t.Fatal("device lost before any fault")
	}
	err := d.fault(fmt.Errorf("vulkan: vkQueueSubmit: %w", vk.Result(vk.ErrorDeviceLost)))
	if !errors.Is(err, backend.ErrDeviceLost) {
		t.Fatalf("%v: not ErrDeviceLost", err)
	}
	p, err := planner.New(&graph.Model{Name: "m", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: graph.NewGraph("g")},
		planner.Options{Devices: []planner.Device{d}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Compile(p, nil); !errors.Is(err, backend.ErrDeviceLost) {
		t.Fatalf("Compile on a lost device: %v", err)
	}
}

// TestTicks checks the conversion of timestamps: the period, and a
// counter of fewer than 64 valid bits that wrapped between the two.
func TestTicks(t *testing.T) {
	d := &Device{info: Info{TimestampPeriod: 2.5, TimestampBits: 36}}
	if got := d.ticks(100, 140); got != 100*time.Nanosecond {
		t.Errorf("ticks(100, 140) = %v, want 100ns", got)
	}
	if got := d.ticks(1<<36-10, 30); got != 100*time.Nanosecond {
		t.Errorf("ticks across a wrap = %v, want 100ns", got)
	}
	d.info.TimestampBits = 64
	if got := d.ticks(^uint64(0)-9, 30); got != 100*time.Nanosecond {
		t.Errorf("ticks across a 64-bit wrap = %v, want 100ns", got)
	}
}
