// Package backend defines the Device interface and the executor that runs
// a planner.Plan over devices.
package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrDeviceUnavailable is wrapped when a requested device does not exist or
// cannot be opened.
var ErrDeviceUnavailable = errors.New("device unavailable")

// Unavailable returns an error with the formatted message that matches
// ErrDeviceUnavailable without appending that error's text: for messages
// that already say why the device cannot be used.
func Unavailable(format string, args ...any) error {
	return &unavailableError{fmt.Sprintf(format, args...)}
}

type unavailableError struct{ msg string }

func (e *unavailableError) Error() string        { return e.msg }
func (e *unavailableError) Is(target error) bool { return target == ErrDeviceUnavailable }

// ErrOutOfMemory is wrapped when a device cannot allocate the memory a
// step needs, or a plan or a Run would exceed the host memory limit
// (planner.ErrOutOfMemory, the same error). The device stays usable: a Run
// that needs less may succeed.
var ErrOutOfMemory = planner.ErrOutOfMemory

// ErrSizesRefused is wrapped when a device's program for a class plan
// cannot run the sizes a Run binds: a node its lowering accepted with trial
// sizes refuses these (an empty tensor, a buffer past the device's storage
// buffer range). A session then runs that Run, and later Runs of those
// sizes, on a concrete plan, which places each node for them.
var ErrSizesRefused = errors.New("the device refuses these sizes")

// ErrDeviceLost is wrapped when a device stopped working (a driver reset,
// VK_ERROR_DEVICE_LOST); every later Run on it fails.
var ErrDeviceLost = errors.New("device lost")

// Device runs plan steps.
type Device interface {
	planner.Device
	// Compile prepares a run of consecutive compute steps of p, all placed
	// on this device, for repeated execution.
	Compile(p *planner.Plan, steps []planner.Step) (Program, error)
	// Upload makes a host value available on the device; Download brings a
	// device value back to the host. The host device returns v itself.
	Upload(v graph.Value) (graph.Value, error)
	Download(v graph.Value) (graph.Value, error)
	// Close releases the device's resources.
	Close() error
}

// Counters count what a device did: queue submissions, kernel dispatches
// submitted, and bytes copied between host memory and device memory.
type Counters struct {
	Submits, Dispatches, HostDeviceBytes int64
}

// Add returns the sum of c and o.
func (c Counters) Add(o Counters) Counters {
	return Counters{c.Submits + o.Submits, c.Dispatches + o.Dispatches, c.HostDeviceBytes + o.HostDeviceBytes}
}

// Counting is implemented by devices that count their work (see Counters).
type Counting interface {
	Counters() Counters
}

// Program is a compiled sequence of steps. Run may be called from several
// goroutines at once, each with its own Frame.
type Program interface {
	Run(ctx context.Context, f *Frame) error
}

// Releaser is implemented by programs that hold device resources of their
// own (memory, command buffers): Release frees them at once instead of
// when the device closes. It is called at most once per program, when no
// Run uses it and none will.
type Releaser interface {
	Release()
}

// Sizer is implemented by programs that hold device memory of their own:
// Bytes is how much one Run of the program needs (its arena and the
// buffers of the values entering and leaving it), weights not counted.
type Sizer interface {
	Bytes() int64
}

// Resident is a tensor that stays in a device's memory between Runs: a Run
// returns it for an output the caller keeps on the device (Frame.Keep), and
// takes it back as an input without a host copy when the step that reads
// it runs on the same device.
type Resident interface {
	graph.Value
	// DeviceName names the device that holds the tensor.
	DeviceName() string
	// Read copies the tensor to the host.
	Read() (*graph.Tensor, error)
	// Release gives the device memory back; the tensor must not be used
	// afterwards. Releasing twice is harmless.
	Release()
}

// Frame is the state of one Run: each device's values by plan index and
// the per-device arenas.
type Frame struct {
	Plan *planner.Plan
	// Values holds, for each device of the plan, the values present on it
	// by plan index: a transfer step copies a value from one device's table
	// to another's, and a value can be on several devices at once.
	Values map[string][]graph.Value
	// Arenas holds each device's arena memory for this run, sized by
	// Plan.ArenaBytes.
	Arenas map[string][]byte
	// Keep holds the plan indices of the graph outputs the caller wants
	// left on the device that computes them, as Resident values.
	Keep map[int]bool
	// Into holds, by plan index, the host tensors the caller gave to write
	// graph outputs into (see RunOptions.Into); a device may fill one
	// instead of allocating the output.
	Into map[int]*graph.Tensor
}
