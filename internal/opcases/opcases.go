// Package opcases reads the single-node reference cases that
// testdata/opset24/gen.py writes (numpy implementations of the opset 23–24
// transformer ops), for the kernel tests of every device.
package opcases

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/npy"
)

// Case is one node with its inputs and the reference outputs.
type Case struct {
	Name  string
	Node  *graph.Node
	Opset int64
	// Inputs holds the node's inputs, nil where absent; Want the expected
	// outputs, nil where the node does not ask for one.
	Inputs, Want []*graph.Tensor
	// GPU tells that a GPU device must run the case rather than leave it
	// to the CPU.
	GPU bool
}

type attr struct {
	I *int64   `json:"i"`
	F *float32 `json:"f"`
	S *string  `json:"s"`
}

type record struct {
	Name    string          `json:"name"`
	Op      string          `json:"op"`
	Opset   int64           `json:"opset"`
	Attrs   map[string]attr `json:"attrs"`
	Inputs  []*string       `json:"inputs"`
	Outputs []*string       `json:"outputs"`
	GPU     bool            `json:"gpu"`
}

// Dir is the folder of the cases, relative to the module root.
const Dir = "testdata/opset24"

// Load reads dir/cases.json and the arrays it names.
func Load(dir string) ([]*Case, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var recs []record
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var out []*Case
	for _, r := range recs {
		c := &Case{Name: r.Name, Opset: r.Opset, GPU: r.GPU,
			Node: &graph.Node{Name: r.Name, OpType: r.Op, Attrs: map[string]*graph.Attribute{}}}
		for name, a := range r.Attrs {
			at := &graph.Attribute{Name: name}
			switch {
			case a.I != nil:
				at.Type, at.I = graph.AttrInt, *a.I
			case a.F != nil:
				at.Type, at.F = graph.AttrFloat, *a.F
			case a.S != nil:
				at.Type, at.S = graph.AttrString, []byte(*a.S)
			default:
				return nil, fmt.Errorf("%s: attribute %s has no value", r.Name, name)
			}
			c.Node.Attrs[name] = at
		}
		read := func(files []*string, prefix string) ([]*graph.Tensor, []string, error) {
			ts, names := make([]*graph.Tensor, len(files)), make([]string, len(files))
			for i, f := range files {
				if f == nil {
					continue
				}
				t, err := npy.ReadFile(filepath.Join(dir, "cases", r.Name, *f))
				if err != nil {
					return nil, nil, err
				}
				ts[i], names[i] = t, fmt.Sprint(prefix, i)
			}
			return ts, names, nil
		}
		if c.Inputs, c.Node.Inputs, err = read(r.Inputs, "x"); err != nil {
			return nil, err
		}
		if c.Want, c.Node.Outputs, err = read(r.Outputs, "y"); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Compare returns "" when got matches want: the same type and shape, the
// same bytes for non-float types, float values within tol (NaN where want
// has NaN); else what differs.
func Compare(got, want *graph.Tensor, tol ops.Tolerance) string {
	switch {
	case got == nil:
		return "missing"
	case got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape):
		return fmt.Sprintf("%s%v, want %s%v", got.DType, got.Shape, want.DType, want.Shape)
	case !want.DType.IsFloat():
		if string(got.Data) != string(want.Data) {
			return "values differ"
		}
		return ""
	}
	for i := range want.NumElements() {
		a, b := got.Float64At(i), want.Float64At(i)
		if math.IsNaN(b) != math.IsNaN(a) || math.Abs(a-b) > tol.Abs+tol.Rel*math.Abs(b) {
			return fmt.Sprintf("element %d = %g, want %g (tolerance %+v)", i, a, b, tol)
		}
	}
	return ""
}
