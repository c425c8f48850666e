package vulkan

import (
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/opcases"
)

// transformerCases returns the cases of testdata/opset24 for op that a GPU
// must run, for diffTable; every other case a constant second input.
// TestTransformerOpsReference runs the cases of testdata/opset24 that a
// GPU must run on the device and compares them with gen.py's numpy
// reference (TestKernels compares them with the CPU).
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
			args := make([]kerneltest.Arg, len(tc.Inputs))
			for i, in := range tc.Inputs {
				args[i] = kerneltest.Arg{T: in}
			}
			gpu, ok := kerneltest.RunOn(t, d, kerneltest.Case{Node: tc.Node, Opset: tc.Opset, Args: args})
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
