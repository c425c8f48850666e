package onnxvk

import (
	"context"
	"fmt"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
)

// RunBatch runs the model on each element of inputs, as Run does, and
// returns their outputs in order: micro-batches pipelined through the
// stages of the device configuration in force, so that stage k works on
// request i while stage k+1 works on request i-1. Each stage takes the
// requests one at a time, in order; the outputs equal those of separate
// Runs. All requests must have the same input types. The first request to
// fail stops the others; the error names its index.
func (s *Session) RunBatch(ctx context.Context, inputs []map[string]*Tensor) ([]map[string]*Tensor, error) {
	vals := make([]map[string]graph.Value, len(inputs))
	for i, in := range inputs {
		var err error
		if vals[i], err = s.tensorValues(in, fmt.Sprintf("request %d: ", i)); err != nil {
			return nil, err
		}
	}
	outs, err := s.runValuesBatch(ctx, vals)
	if err != nil {
		return nil, err
	}
	res := make([]map[string]*Tensor, len(outs))
	for i, out := range outs {
		if res[i], err = s.valueTensors(out); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// runValuesBatch is RunBatch on graph values: tensors, sequences,
// optionals and maps.
func (s *Session) runValuesBatch(ctx context.Context, inputs []map[string]graph.Value) (_ []map[string]graph.Value, err error) {
	ctx, leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = leave(err) }()
	if len(inputs) == 0 {
		return nil, nil
	}
	var first *callShape
	for i, in := range inputs {
		call, err := s.checkInputs(in)
		if err != nil {
			return nil, fmt.Errorf("%w (request %d)", err, i)
		}
		if i == 0 {
			first = call
		} else if call.key != first.key {
			return nil, fmt.Errorf("onnxvk: model %q: request %d: input types %s differ from request 0's %s: %w", s.model.Name, i, call.key, first.key, ErrInputMismatch)
		}
	}
	return runOn(s, first, nil, func(ex *backend.Executor) ([]map[string]graph.Value, error) { return ex.RunBatch(ctx, inputs) })
}
