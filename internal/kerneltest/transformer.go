package kerneltest

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"

	"github.com/onnxvk/onnxvk/internal/opcases"
)

// transformerCases are the cases of testdata/opset24 (gen.py's numpy
// reference, read by internal/opcases) of op that a GPU must run; every
// other case's second input is a constant.
func transformerCases(op string, _ *rand.Rand) []Case {
	_, file, _, _ := runtime.Caller(0)
	all, err := opcases.Load(filepath.Join(filepath.Dir(file), "..", "..", opcases.Dir))
	if err != nil {
		panic(err)
	}
	var cs []Case
	for _, c := range all {
		if c.Node.OpType != op || !c.GPU {
			continue
		}
		args := make([]Arg, len(c.Inputs))
		for i, t := range c.Inputs {
			args[i] = Arg{T: t, Const: i == 1 && len(cs)%2 == 1}
		}
		cs = append(cs, Case{Node: c.Node, Opset: c.Opset, Args: args})
	}
	return cs
}
