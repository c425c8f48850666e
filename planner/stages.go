package planner

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
)

// ErrBadDeviceConfiguration is wrapped by errors about a model's IR 11
// multi-device annotations: a node naming an unknown configuration, a
// pipeline stage or sharding device outside its configuration.
var ErrBadDeviceConfiguration = errors.New("invalid device configuration")

// Stages places nodes by the pipeline stages of one IR 11 device
// configuration of the model: pipeline stage k runs on the configuration's
// logical device k.
type Stages struct {
	// Configuration names the configuration (graph.DeviceConfiguration.Name).
	Configuration string
	// Devices holds the device that runs each logical device, by index;
	// there must be one per device of the configuration. Several logical
	// devices may be the host device; others should be separate device
	// instances (named as LogicalName says) so that their arenas and
	// segments stay apart.
	Devices []Device
	// Physical names, by logical device, the device it maps onto
	// ("vulkan:0", "cpu"), for reports.
	Physical []string
	// Notes are the mapper's remarks on the mapping (why logical devices
	// share a device), copied into Plan.Notes.
	Notes []string
}

// LogicalName is the name plans give logical device k of a configuration:
// "d0", "d1", ...
func LogicalName(k int) string { return "d" + strconv.Itoa(k) }

// FindConfiguration returns the model's configuration called name, or its
// first configuration when name is "". It returns nil and no error when the
// model has no configuration and name is "".
func FindConfiguration(m *graph.Model, name string) (*graph.DeviceConfiguration, error) {
	if name == "" {
		if len(m.Configurations) == 0 {
			return nil, nil
		}
		return &m.Configurations[0], nil
	}
	for i := range m.Configurations {
		if m.Configurations[i].Name == name {
			return &m.Configurations[i], nil
		}
	}
	have := make([]string, len(m.Configurations))
	for i, c := range m.Configurations {
		have[i] = strconv.Quote(c.Name)
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("model %q: device configuration %q: %w: the model has no device configurations", m.Name, name, ErrBadDeviceConfiguration)
	}
	return nil, fmt.Errorf("model %q: device configuration %q: %w: the model has %s", m.Name, name, ErrBadDeviceConfiguration, strings.Join(have, ", "))
}

// OtherConfigurations names m's device configurations other than the one
// called name, in the model's order.
func OtherConfigurations(m *graph.Model, name string) []string {
	var others []string
	for _, c := range m.Configurations {
		if c.Name != name {
			others = append(others, c.Name)
		}
	}
	return others
}

// CheckDeviceConfigurations validates the model's IR 11 annotations: every
// configuration has a unique name and at least one device, and every
// node's annotation (subgraphs included) names a configuration, a pipeline
// stage within its devices, sharding specs for the node's own tensors and
// device indices within its devices. The error names the node and field.
func CheckDeviceConfigurations(m *graph.Model) error {
	configs := map[string]int32{}
	for i, c := range m.Configurations {
		if _, dup := configs[c.Name]; dup {
			return fmt.Errorf("model %q: configuration[%d].name %q: %w: the name is used twice", m.Name, i, c.Name, ErrBadDeviceConfiguration)
		}
		if c.NumDevices <= 0 {
			return fmt.Errorf("model %q: configuration[%d] %q: num_devices is %d: %w: want at least 1", m.Name, i, c.Name, c.NumDevices, ErrBadDeviceConfiguration)
		}
		configs[c.Name] = c.NumDevices
	}
	if m.Graph == nil {
		return nil
	}
	if err := checkGraphAnnotations(m.Graph, configs); err != nil {
		return fmt.Errorf("model %q: %w", m.Name, err)
	}
	return nil
}

// checkGraphAnnotations validates the annotations of g's nodes and of
// their subgraphs' nodes against configs (name to device count).
func checkGraphAnnotations(g *graph.Graph, configs map[string]int32) error {
	for _, n := range g.Nodes {
		for i, dc := range n.DeviceConfigs {
			if err := checkNodeAnnotation(n, dc, configs); err != nil {
				return fmt.Errorf("%s: device_configurations[%d].%w", n, i, err)
			}
		}
		for _, a := range n.Attrs {
			for _, sg := range graph.Subgraphs(a) {
				if err := checkGraphAnnotations(sg, configs); err != nil {
					return fmt.Errorf("%s: attribute %q: %w", n, a.Name, err)
				}
			}
		}
	}
	return nil
}

// checkNodeAnnotation validates one annotation of n; the error begins with
// the field, which the caller prefixes with the annotation's position.
func checkNodeAnnotation(n *graph.Node, dc graph.NodeDeviceConfiguration, configs map[string]int32) error {
	num, ok := configs[dc.ConfigurationID]
	if !ok {
		return fmt.Errorf("configuration_id %q: %w: no configuration of the model has that name", dc.ConfigurationID, ErrBadDeviceConfiguration)
	}
	if dc.HasStage && (dc.PipelineStage < 0 || dc.PipelineStage >= num) {
		return fmt.Errorf("pipeline_stage %d: %w: configuration %q has devices 0..%d", dc.PipelineStage, ErrBadDeviceConfiguration, dc.ConfigurationID, num-1)
	}
	for k, s := range dc.Sharding {
		if !slices.Contains(n.Inputs, s.TensorName) && !slices.Contains(n.Outputs, s.TensorName) {
			return fmt.Errorf("sharding_spec[%d].tensor_name %q: %w: not an input or output of the node", k, s.TensorName, ErrBadDeviceConfiguration)
		}
		for j, d := range s.Devices {
			if _, group := s.DeviceGroups[d]; !group && (d < 0 || d >= int64(num)) {
				return fmt.Errorf("sharding_spec[%d].device[%d] %d: %w: configuration %q has devices 0..%d", k, j, d, ErrBadDeviceConfiguration, dc.ConfigurationID, num-1)
			}
		}
		for key, members := range s.DeviceGroups {
			for j, d := range members {
				if d < 0 || d >= int64(num) {
					return fmt.Errorf("sharding_spec[%d].index_to_device_group_map[%d][%d] %d: %w: configuration %q has devices 0..%d",
						k, key, j, d, ErrBadDeviceConfiguration, dc.ConfigurationID, num-1)
				}
			}
		}
	}
	return nil
}

// annotation returns n's annotation for the configuration, if any.
func annotation(n *graph.Node, config string) (graph.NodeDeviceConfiguration, bool) {
	for _, dc := range n.DeviceConfigs {
		if dc.ConfigurationID == config {
			return dc, true
		}
	}
	return graph.NodeDeviceConfiguration{}, false
}

// stagePlacer chooses the device of each node under Stages: the node's
// pipeline stage, else the latest stage among the producers of its inputs,
// else stage 0; the stage's device when it supports the node, else the
// host device.
type stagePlacer struct {
	st    *Stages
	host  Device
	stage map[string]int
	// comm tells the communication nodes that tensor sharding inserted
	// (see Plan.comm); they run on the host.
	comm func(*graph.Node) (Comm, bool)
}

// newStagePlacer checks st against m's configuration and finds the host
// device among devices.
func newStagePlacer(m *graph.Model, st *Stages, devices []Device) (*stagePlacer, error) {
	c, err := FindConfiguration(m, st.Configuration)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("model %q: %w: pipeline stages requested but the model has no device configuration", m.Name, ErrBadDeviceConfiguration)
	}
	if len(st.Devices) != int(c.NumDevices) || len(st.Physical) != len(st.Devices) {
		return nil, fmt.Errorf("model %q: configuration %q has %d devices, the plan maps %d (%d physical names)",
			m.Name, c.Name, c.NumDevices, len(st.Devices), len(st.Physical))
	}
	sp := &stagePlacer{st: st, stage: map[string]int{}}
	for _, d := range devices {
		if d.Name() == HostDevice {
			sp.host = d
		}
	}
	return sp, nil
}

// place returns the device that runs n and its logical device's name, or
// "" when neither the stage's device nor the host supports it.
func (sp *stagePlacer) place(n *graph.Node, q Query) (dev, logical string) {
	if _, ok := sp.comm(n); ok {
		return sp.placeComm(n), ""
	}
	stage := 0
	if dc, ok := annotation(n, sp.st.Configuration); ok && dc.HasStage {
		stage = int(dc.PipelineStage)
	} else {
		for _, in := range n.Inputs {
			if s, ok := sp.stage[in]; ok {
				stage = max(stage, s)
			}
		}
	}
	for _, out := range n.Outputs {
		if out != "" {
			sp.stage[out] = stage
		}
	}
	logical = LogicalName(stage)
	if d := sp.st.Devices[stage]; d.Supports(q) {
		return d.Name(), logical
	}
	if sp.host != nil && sp.host.Supports(q) {
		return HostDevice, logical
	}
	return "", logical
}

// placeComm places communication node n on the host; its outputs belong
// to the earliest stage among its inputs, so that consumers without a
// stage of their own follow the first device of the group it serves.
func (sp *stagePlacer) placeComm(n *graph.Node) string {
	stage := -1
	for _, in := range n.Inputs {
		if s, ok := sp.stage[in]; ok && (stage < 0 || s < stage) {
			stage = s
		}
	}
	for _, out := range n.Outputs {
		if stage >= 0 {
			sp.stage[out] = stage
		}
	}
	return HostDevice
}
