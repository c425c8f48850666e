package onnxvk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/planner"
)

func init() {
	sessionvalues.Of = func(s any) sessionvalues.Session { return valueSession{s.(*Session)} }
}

// valueSession is a Session seen through graph values (see
// internal/sessionvalues).
type valueSession struct{ s *Session }

func (v valueSession) RunValues(ctx context.Context, inputs map[string]graph.Value) (map[string]graph.Value, error) {
	return v.s.runValues(ctx, inputs, backend.RunOptions{}, nil)
}

func (v valueSession) RunValuesBatch(ctx context.Context, inputs []map[string]graph.Value) ([]map[string]graph.Value, error) {
	return v.s.runValuesBatch(ctx, inputs)
}

func (v valueSession) Plan(inputs map[string]*graph.Type) (_ *planner.Plan, err error) {
	s := v.s
	_, leave, err := s.enter(context.Background())
	if err != nil {
		return nil, err
	}
	defer func() { err = leave(err) }()
	return s.plan(inputs)
}

func (v valueSession) Type(name string) *graph.Type {
	g := v.s.model.Graph
	for _, vi := range slices.Concat(g.Inputs, g.Outputs) {
		if vi.Name == name {
			return vi.Type
		}
	}
	return nil
}

// PlanInfo describes the plan a session makes for one set of input
// shapes: where each node runs, and which devices declined it and why,
// and the memory it takes. Its WriteText and JSON forms are those of the
// plan command.
type PlanInfo struct {
	// Nodes are the plan's compute steps in order: one per node left
	// after constant folding and fusion (one per shard of a sharded
	// node).
	Nodes []PlannedNode
	// PeakBytes is the most memory the plan's values take at once, and
	// TransferBytes what it copies between devices per Run.
	PeakBytes, TransferBytes int64
	// FoldedNodes counts the nodes constant folding computed at planning.
	FoldedNodes int

	report *planner.Report
}

// PlannedNode is where a plan runs one node.
type PlannedNode struct {
	// Name and Op are the node's name and op type.
	Name, Op string
	// Device is the device that runs it ("cpu", "vulkan:0"; under a
	// device configuration, the logical device).
	Device string
	// Declined says, for each device ahead of Device in the session's
	// order that declined the node, why.
	Declined []DeviceDecline
}

// DeviceDecline is why a device declined a node.
type DeviceDecline struct {
	Device, Reason string
}

// PlanInfo plans the session's model for the given input shapes by name
// (inputs not listed keep their declared shapes, with symbolic dimensions
// unknown) and describes the plan. An input the model does not have, or a
// shape of another rank than declared, is an error wrapping
// ErrInputMismatch.
func (s *Session) PlanInfo(shapes map[string][]int64) (_ *PlanInfo, err error) {
	types := map[string]*graph.Type{}
	for name, shape := range shapes {
		i := slices.IndexFunc(s.inputs, func(in ValueInfo) bool { return in.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("onnxvk: model %q has no input %q (inputs: %s): %w", s.model.Name, name, s.inputNames(), ErrInputMismatch)
		}
		in := s.inputs[i]
		if in.Shape != nil && len(in.Shape) != len(shape) {
			return nil, fmt.Errorf("onnxvk: model %q: input %q: shape %v has rank %d, the model declares %v: %w", s.model.Name, name, shape, len(shape), in.Shape, ErrInputMismatch)
		}
		types[name] = graph.TensorType(in.DType, graph.ShapeOf(shape...))
	}
	p, err := valueSession{s}.Plan(types)
	if err != nil {
		return nil, err
	}
	r := p.Report()
	info := &PlanInfo{PeakBytes: r.PeakBytes, TransferBytes: r.TransferBytes, FoldedNodes: r.FoldedNodes, report: r}
	for _, st := range r.Steps {
		if st.Node == "" {
			continue
		}
		n := PlannedNode{Name: st.Node, Op: st.Op, Device: st.Device}
		for _, d := range st.Declined {
			n.Declined = append(n.Declined, DeviceDecline{Device: d.Device, Reason: d.Reason})
		}
		info.Nodes = append(info.Nodes, n)
	}
	return info, nil
}

// WriteText writes the plan as text, step by step, as the plan command
// prints it.
func (p *PlanInfo) WriteText(w io.Writer) error { return p.report.WriteText(w) }

// MarshalJSON writes the plan as the plan command's --json does.
func (p *PlanInfo) MarshalJSON() ([]byte, error) { return json.Marshal(p.report) }
