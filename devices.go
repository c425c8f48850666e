package onnxvk

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
)

// DeviceInfo describes a device a Session can run on, as Devices lists it.
type DeviceInfo struct {
	// Name is what WithDevice takes: "cpu" or "vulkan:N" (which also
	// takes "vulkan:" and the device's UUID or Description).
	Name string `json:"name"`
	// UUID identifies a Vulkan device across processes and driver
	// instances (8-4-4-4-12 hexadecimal digits); empty for the host.
	UUID string `json:"uuid,omitempty"`
	// Description is the product ("NVIDIA H200", "llvmpipe (...)", or the
	// CPU's architecture and thread count).
	Description string `json:"description"`
	// Kind is "host" for the host CPU, else the Vulkan device type: "discrete",
	// "integrated", "virtual", "cpu" (a CPU implementation of Vulkan, such
	// as lavapipe) or "other".
	Kind string `json:"kind"`
	// Driver is the driver's name and version; APIVersion the Vulkan
	// version the device supports. Both empty for the host.
	Driver     string `json:"driver,omitempty"`
	APIVersion string `json:"api_version,omitempty"`
	// MemoryBytes is the device-local memory (0 for the host).
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// SubgroupSize is the default subgroup (warp, wave) width.
	SubgroupSize int `json:"subgroup_size,omitempty"`
	// Float16 and Int8 report shader arithmetic on those types;
	// Storage16Bit 16-bit values in buffers (what WithFP16 needs);
	// CooperativeMatrix the matrix-unit extension.
	Float16           bool `json:"float16,omitempty"`
	Int8              bool `json:"int8,omitempty"`
	Storage16Bit      bool `json:"storage_16bit,omitempty"`
	CooperativeMatrix bool `json:"cooperative_matrix,omitempty"`
	// MatrixUnit is the shape (M, N, K) of the matrix units that float16
	// products run on, absent where the device has none that onnxvk
	// takes (vulkan.Info.MatrixUnit).
	MatrixUnit []uint32 `json:"matrix_unit,omitempty"`
	// Default marks the device WithDevice("vulkan") opens; Auto the one
	// WithDevice("auto"), the default, runs on.
	Default bool `json:"default,omitempty"`
	Auto    bool `json:"auto,omitempty"`
}

// Devices lists the devices sessions can run on: the Vulkan devices with a
// compute queue, then the host CPU, which is always there. The reason
// reports why auto runs on the CPU when it does ("" otherwise), including
// why no Vulkan device is listed.
func Devices() (devices []DeviceInfo, reason string) {
	host := DeviceInfo{Name: "cpu", Kind: "host", Description: fmt.Sprintf("%s/%s, %d threads", runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))}
	infos, err := vulkan.Devices()
	if err != nil {
		host.Auto = true
		return []DeviceInfo{host}, strings.TrimPrefix(err.Error(), "vulkan: ")
	}
	def := vulkan.DefaultIndex(infos)
	auto, autoErr := vulkan.AutoIndex(infos)
	for i, in := range infos {
		d := DeviceInfo{Name: fmt.Sprintf("vulkan:%d", in.Index), UUID: in.UUID, Description: in.Name, Kind: in.Type,
			Driver: strings.TrimSpace(in.Driver + " " + in.DriverInfo), APIVersion: in.APIVersion,
			SubgroupSize: int(in.SubgroupSize), Float16: in.Float16, Int8: in.Int8, Storage16Bit: in.Storage16Bit,
			CooperativeMatrix: in.CooperativeMatrix, Default: i == def, Auto: autoErr == nil && i == auto}
		if in.MatrixUnit[0] > 0 {
			d.MatrixUnit = in.MatrixUnit[:]
		}
		for _, h := range in.Heaps {
			if h.DeviceLocal {
				d.MemoryBytes += h.Size
			}
		}
		devices = append(devices, d)
	}
	if autoErr != nil {
		host.Auto = true
		reason = strings.TrimPrefix(autoErr.Error(), "vulkan: ")
	}
	return append(devices, host), reason
}

// DeviceReason says in one line why the session runs where it does: what
// the device option asked for and what it chose, and for auto on the CPU
// why no GPU was taken.
func (s *Session) DeviceReason() string {
	return s.reason
}

// deviceReason explains devs, the devices opened for the device option
// name (the CPU last); why is the reason auto took no GPU ("" otherwise).
func deviceReason(name string, devs []backend.Device, why string) string {
	chosen := devs[0].Name()
	if d, ok := devs[0].(*vulkan.Device); ok {
		chosen += " (" + d.Info().Name + ")"
	}
	switch name {
	case "cpu":
		return "runs on the CPU: the device option is cpu"
	case "", "auto":
		if len(devs) == 1 {
			return "runs on the CPU: auto takes no GPU: " + strings.TrimPrefix(why, "vulkan: ")
		}
		return "runs on " + chosen + ": auto takes the best Vulkan device that is not a CPU implementation"
	case "vulkan":
		return "runs on " + chosen + ": vulkan takes the best Vulkan device (discrete, integrated, virtual, then CPU implementations)"
	}
	return "runs on " + chosen + ": the device option names it"
}
