package onnxvk

import (
	"fmt"
	"strings"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrBadDeviceConfiguration: the model's IR 11 multi-device annotations
// are inconsistent (a node names an unknown configuration, a pipeline
// stage or device index is out of range), or the requested configuration
// or device mapping does not fit the model.
var ErrBadDeviceConfiguration = planner.ErrBadDeviceConfiguration

// WithConfiguration selects, by name, the IR 11 device configuration whose
// pipeline stages place the model's nodes; without it the model's first
// configuration is in force. A name the model lacks fails the load.
func WithConfiguration(name string) Option { return func(o *options) { o.configuration = name } }

// WithDeviceMapping maps the logical devices of the configuration in
// force, in order, onto devices: "cpu", "vulkan" or "vulkan:N", one entry
// per logical device. Several entries may name the same GPU: each logical
// device then gets its own instance of it. Without it, the logical devices
// take distinct Vulkan devices of the best kind when there are enough and
// share the first otherwise (see Session.MultiDevice for what was chosen).
func WithDeviceMapping(devices []string) Option {
	return func(o *options) { o.mapping = append([]string(nil), devices...) }
}

// MultiDevice says how a session applies its model's IR 11 multi-device
// annotations.
type MultiDevice struct {
	// Configuration is the configuration in force, "" when the model has
	// none.
	Configuration string
	// Others are the model's other configurations, not applied.
	Others []string
	// Physical names, by logical device (d0, d1, ...), the device it maps
	// onto: "vulkan:N" or "cpu".
	Physical []string
	// Notes say when logical devices share a device, and why.
	Notes []string
}

// MultiDevice describes the configuration in force and the mapping of its
// logical devices.
func (s *Session) MultiDevice() MultiDevice {
	md := s.multi
	md.Others = append([]string(nil), md.Others...)
	md.Physical = append([]string(nil), md.Physical...)
	md.Notes = append([]string(nil), md.Notes...)
	return md
}

// openConfigured opens the devices of m's configuration in force, if any:
// one device instance per logical device that maps onto a GPU, then the
// CPU. It returns nil devices when the model has no configuration and the
// options name none.
func openConfigured(m *graph.Model, o options, threads *hostfallback.Threads) ([]backend.Device, *planner.Stages, MultiDevice, error) {
	var md MultiDevice
	if err := planner.CheckDeviceConfigurations(m); err != nil {
		return nil, nil, md, err
	}
	cfg, err := planner.FindConfiguration(m, o.configuration)
	if err != nil {
		return nil, nil, md, err
	}
	if cfg == nil {
		if len(o.mapping) > 0 {
			return nil, nil, md, fmt.Errorf("model %q: a device mapping is given, but the model has no device configuration: %w", m.Name, ErrBadDeviceConfiguration)
		}
		return nil, nil, md, nil
	}
	md.Configuration, md.Others = cfg.Name, planner.OtherConfigurations(m, cfg.Name)
	num := int(cfg.NumDevices)
	mapping := o.mapping
	if len(mapping) == 0 {
		var note string
		if mapping, note, err = defaultMapping(cfg, o.device); err != nil {
			return nil, nil, md, fmt.Errorf("model %q: %w", m.Name, err)
		}
		if note != "" {
			md.Notes = append(md.Notes, note)
		}
	} else if len(mapping) != num {
		return nil, nil, md, fmt.Errorf("model %q: configuration %q has %d logical devices, the device mapping names %d: %w",
			m.Name, cfg.Name, num, len(mapping), ErrBadDeviceConfiguration)
	}
	cpu := hostfallback.NewDevice(threads)
	st := &planner.Stages{Configuration: cfg.Name, Devices: make([]planner.Device, num), Physical: make([]string, num)}
	var devs []backend.Device
	closeAll := func() {
		for _, d := range devs {
			d.Close()
		}
	}
	for k, name := range mapping {
		logical := planner.LogicalName(k)
		switch {
		case name == planner.HostDevice:
			st.Devices[k], st.Physical[k] = cpu, planner.HostDevice
		case name == "vulkan" || strings.HasPrefix(name, "vulkan:"):
			d, err := vulkan.OpenAs(name, logical, o.vulkanOptions()...)
			if err != nil {
				closeAll()
				return nil, nil, md, fmt.Errorf("model %q: configuration %q: logical device %s on %q: %w", m.Name, cfg.Name, logical, name, err)
			}
			devs = append(devs, d)
			st.Devices[k], st.Physical[k] = d, fmt.Sprintf("vulkan:%d", d.Info().Index)
		default:
			closeAll()
			return nil, nil, md, fmt.Errorf("model %q: configuration %q: logical device %s on %q: unknown device (want cpu, vulkan or vulkan:N): %w",
				m.Name, cfg.Name, logical, name, ErrDeviceUnavailable)
		}
	}
	md.Physical, st.Notes = st.Physical, md.Notes
	return append(devs, cpu), st, md, nil
}

// defaultMapping maps the num logical devices of cfg onto physical devices
// for the device option: all on the CPU or on one named GPU; for "auto"
// and "vulkan", distinct Vulkan devices of the best kind when there are
// enough, else all on the first ("auto" takes the CPU where it would for
// a single device). The note says when logical devices share a device.
func defaultMapping(cfg *graph.DeviceConfiguration, device string) ([]string, string, error) {
	num := int(cfg.NumDevices)
	all := func(name, why string) ([]string, string, error) {
		mapping := make([]string, num)
		for k := range mapping {
			mapping[k] = name
		}
		if num == 1 {
			return mapping, "", nil
		}
		return mapping, fmt.Sprintf("configuration %q names %d devices, %s: its logical devices share %s", cfg.Name, num, why, name), nil
	}
	switch {
	case device == planner.HostDevice:
		return all(planner.HostDevice, "the session runs on the CPU")
	case strings.HasPrefix(device, "vulkan:"):
		return all(device, "the session runs on "+device)
	case device != "" && device != "auto" && device != "vulkan":
		return nil, "", unknownDevice(device)
	}
	infos, err := vulkan.Devices()
	best := -1
	if err == nil {
		best = vulkan.DefaultIndex(infos)
		if device != "vulkan" {
			if _, err = vulkan.AutoIndex(infos); err != nil {
				best = -1
			}
		}
	}
	if best < 0 && err == nil {
		err = fmt.Errorf("the Vulkan loader lists no device: %w", ErrDeviceUnavailable)
	}
	if best < 0 {
		if device == "vulkan" {
			return nil, "", fmt.Errorf("device %q: %w", device, err)
		}
		return all(planner.HostDevice, "no Vulkan device is used ("+err.Error()+")")
	}
	var same []string
	for _, in := range infos {
		if in.Type == infos[best].Type {
			same = append(same, fmt.Sprintf("vulkan:%d", in.Index))
		}
	}
	if len(same) >= num {
		return same[:num], "", nil
	}
	first := fmt.Sprintf("vulkan:%d", infos[best].Index)
	present := fmt.Sprintf("only %d Vulkan devices of type %q are present", len(same), infos[best].Type)
	if len(same) == 1 {
		present = fmt.Sprintf("only 1 Vulkan device of type %q is present", infos[best].Type)
	}
	return all(first, present)
}
