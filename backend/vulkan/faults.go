package vulkan

import (
	"errors"
	"fmt"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
)

// SetMemoryLimit caps the device memory d allocates, weights, arenas, io
// and staging buffers together, at limit bytes; 0 (the default) means no
// cap. An allocation beyond the cap fails as when the device runs out of
// memory: the error wraps backend.ErrOutOfMemory and the device stays
// usable.
func (d *Device) SetMemoryLimit(limit int64) { d.memLimit.Store(max(limit, 0)) }

// MemoryInUse returns the device memory d has allocated now, in bytes.
func (d *Device) MemoryInUse() int64 { return d.memUsed.Load() }

// reserve counts size more bytes of device memory, failing with
// VK_ERROR_OUT_OF_DEVICE_MEMORY when that exceeds the limit.
func (d *Device) reserve(size int64) error {
	used := d.memUsed.Add(size)
	if limit := d.memLimit.Load(); limit > 0 && used > limit {
		d.memUsed.Add(-size)
		return fmt.Errorf("vulkan: %d bytes more exceed the memory limit of %d bytes (%d in use): %w",
			size, limit, used-size, vk.Result(vk.ErrorOutOfDeviceMemory))
	}
	return nil
}

// deviceError is a Vulkan error that errors.Is also matches with a
// backend sentinel.
type deviceError struct {
	err, kind error
}

func (e *deviceError) Error() string   { return e.err.Error() }
func (e *deviceError) Unwrap() []error { return []error{e.err, e.kind} }

// fault classifies an error of a Vulkan call: out of host or device memory
// also matches backend.ErrOutOfMemory; device lost matches
// backend.ErrDeviceLost and marks d lost, so that later Runs fail at once.
// Other errors are returned as they are.
func (d *Device) fault(err error) error {
	var r vk.Result
	if err == nil || !errors.As(err, &r) || errors.Is(err, backend.ErrOutOfMemory) || errors.Is(err, backend.ErrDeviceLost) {
		return err
	}
	switch r {
	case vk.ErrorOutOfHostMemory, vk.ErrorOutOfDeviceMemory:
		return &deviceError{err: err, kind: backend.ErrOutOfMemory}
	case vk.ErrorDeviceLost:
		d.lost.Store(true)
		return &deviceError{err: fmt.Errorf("%w (%s is lost: close the session and open a new one)", err, d.name), kind: backend.ErrDeviceLost}
	}
	return err
}

// checkLost fails with backend.ErrDeviceLost once the device was lost.
func (d *Device) checkLost() error {
	if d.lost.Load() {
		return fmt.Errorf("vulkan: %s was lost earlier: close the session and open a new one: %w", d.name, backend.ErrDeviceLost)
	}
	return nil
}
