// Package sessionvalues gives onnxvk's own commands, benchmarks and tests
// the parts of a Session that speak the internal types of graph and
// planner, which the public API keeps out: runs on graph values (whose
// inputs and outputs may be sequences, optionals or maps) and the plans
// themselves.
package sessionvalues

import (
	"context"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// Session is an onnxvk.Session seen through graph values.
type Session interface {
	// RunValues is Run on graph values: tensors, sequences, optionals and
	// maps.
	RunValues(ctx context.Context, inputs map[string]graph.Value) (map[string]graph.Value, error)
	// RunValuesBatch is RunBatch on graph values.
	RunValuesBatch(ctx context.Context, inputs []map[string]graph.Value) ([]map[string]graph.Value, error)
	// Plan returns a plan of the session's model for the given input
	// types (inputs not listed keep their declared types).
	Plan(inputs map[string]*graph.Type) (*planner.Plan, error)
	// Type returns the declared type of the model input or output name,
	// nil when the model has none of that name or declares no type.
	Type(name string) *graph.Type
}

// Of returns s, an *onnxvk.Session, as a Session; package onnxvk sets it
// when it is initialized (it cannot be imported from here).
var Of func(s any) Session
