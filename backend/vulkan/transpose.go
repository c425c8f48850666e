package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// maxTransposeRank is the highest rank transpose.comp handles.
const maxTransposeRank = 6

func init() { register("Transpose", lowerTranspose) }

// lowerTranspose lowers Transpose with any permutation (default: the axes
// reversed) up to rank maxTransposeRank.
func lowerTranspose(q *query) (*launch, bool) {
	n, shapes := q.n, q.shapes
	x := shapes[0]
	if len(shapes) != 1 || len(x) > maxTransposeRank {
		return nil, false
	}
	perm := transposePerm(n, q.opset, len(x))
	if len(perm) != len(x) {
		return nil, false
	}
	in := make([]int64, len(x))
	step := int64(1)
	for i := len(x) - 1; i >= 0; i-- {
		in[i] = step
		step *= x[i]
	}
	seen := make([]bool, len(x))
	out := make([]int64, len(x))
	dims, st := make([]uint32, maxTransposeRank), make([]uint32, maxTransposeRank)
	for i, p := range perm {
		if p < 0 || p >= int64(len(x)) || seen[p] {
			return nil, false
		}
		seen[p] = true
		out[i] = x[p]
		dims[i], st[i] = uint32(x[p]), uint32(in[p])
	}
	elems := graph.NumElements(x)
	vals := append(append([]uint32{uint32(elems), uint32(len(x))}, dims...), st...)
	return &launch{shader: "transpose", bindings: []slot{{false, 0}, {true, 0}}, push: words(vals...), elems: elems, outShapes: [][]int64{out}}, true
}

// transposePerm returns the permutation of Transpose n of a tensor of the
// given rank: its perm attribute, by default the axes reversed.
func transposePerm(n *graph.Node, opset int64, rank int) []int64 {
	perm := ops.Params[ops.TransposeParams](n, opset).Perm
	if perm == nil {
		for i := rank - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	return perm
}
