package vulkan

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/opcases"
)

// transformerCases returns the cases of testdata/opset24 for op that a GPU
// must run, for diffTable; every other case a constant second input.
func transformerCases(op string, _ *rand.Rand) []diffCase {
	all, err := opcases.Load(filepath.Join("..", "..", opcases.Dir))
	if err != nil {
		panic(err)
	}
	var cs []diffCase
	for _, c := range all {
		if c.Node.OpType != op || !c.GPU {
			continue
		}
		args := make([]arg, len(c.Inputs))
		for i, t := range c.Inputs {
			args[i] = arg{t: t, konst: i == 1 && len(cs)%2 == 1}
		}
		cs = append(cs, diffCase{c.Node, c.Opset, args})
	}
	return cs
}

// TestTransformerOpsReference runs the cases of testdata/opset24 that a
// GPU must run on the device and compares them with gen.py's numpy
// reference (TestDifferential compares them with the CPU).
func TestTransformerOpsReference(t *testing.T) {
	d := openTest(t)
	cases, err := opcases.Load(filepath.Join("..", "..", opcases.Dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if !tc.GPU {
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			args := make([]arg, len(tc.Inputs))
			for i, in := range tc.Inputs {
				args[i] = arg{t: in}
			}
			gpu, _, ok := runTyped(t, d, tc.Node, tc.Opset, args)
			if !ok {
				t.Fatalf("the device declines %s", tc.Node.OpType)
			}
			tol := ops.Lookup(graph.DefaultDomain, tc.Node.OpType, tc.Opset).Tolerance()
			at := 0
			for k, want := range tc.Want {
				if tc.Node.Outputs[k] == "" {
					continue
				}
				if msg := opcases.Compare(gpu[at], want, tol); msg != "" {
					t.Errorf("output %d: %s", k, msg)
				}
				at++
			}
		})
	}
}
