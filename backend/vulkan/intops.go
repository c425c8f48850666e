package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Ops of intops.comp: OP is 16 * type + op.
const (
	intAdd int32 = iota
	intSub
	intMul
	intDiv
	intMod
	intFMod
	intMax
	intMin
	intShl
	intShr
	intNeg
	intAbs
	intSign
)

// intTypes numbers the element types of intops.comp; float32 is for Sign
// only.
var intTypes = map[graph.DType]int32{graph.Int32: 0, graph.Int64: 1, graph.Uint32: 2, graph.Uint64: 3, graph.Float: 4}

// Add, Sub, Mul, Div, Mod, Max and Min (with broadcasting) of int32, int64,
// uint32 and uint64, BitShift of uint32 and uint64, Neg, Abs and Sign of
// int32 and int64, and Sign of float32 run on intops.comp; the other
// float32 ops go to binary.comp and unary.comp. A zero divisor gives 0
// where the CPU kernel fails.
func init() {
	for name, op := range map[string]int32{"Add": intAdd, "Sub": intSub, "Mul": intMul, "Div": intDiv, "Max": intMax, "Min": intMin} {
		register(name, func(q *query) (*launch, bool) {
			if q.opset < 7 {
				return nil, false
			}
			return lowerIntBinary(q, op)
		})
	}
	register("Mod", func(q *query) (*launch, bool) {
		op := intMod
		if ops.Params[ops.ModParams](q.n, q.opset).Fmod != 0 {
			op = intFMod
		}
		return lowerIntBinary(q, op)
	})
	register("BitShift", func(q *query) (*launch, bool) {
		if q.elems[0] != graph.Uint32 && q.elems[0] != graph.Uint64 {
			return nil, false
		}
		switch ops.Params[ops.BitShiftParams](q.n, q.opset).Direction {
		case "LEFT":
			return lowerIntBinary(q, intShl)
		case "RIGHT":
			return lowerIntBinary(q, intShr)
		}
		return nil, false
	})
	for name, op := range map[string]int32{"Neg": intNeg, "Abs": intAbs, "Sign": intSign} {
		register(name, func(q *query) (*launch, bool) {
			signed := q.elems[0] == graph.Int32 || q.elems[0] == graph.Int64
			if len(q.shapes) != 1 || !signed && (op != intSign || q.elems[0] != graph.Float) {
				return nil, false
			}
			return intLaunch(q, 16*intTypes[q.elems[0]]+op, 0, 0)
		})
	}
}

// lowerIntBinary lowers op on two int32, int64, uint32 or uint64 tensors
// of one type.
func lowerIntBinary(q *query, op int32) (*launch, bool) {
	if len(q.shapes) != 2 || q.shapes[1] == nil || q.elems[0] != q.elems[1] || q.elems[0] == graph.Float {
		return nil, false
	}
	ty, ok := intTypes[q.elems[0]]
	if !ok {
		return nil, false
	}
	return intLaunch(q, 16*ty+op, 0, 1)
}

// intLaunch returns the dispatch of intops.comp for op on inputs a and b
// (the same input for the unary ops) broadcast together; ok is false when
// the shapes do not broadcast or do not fit.
func intLaunch(q *query, op int32, a, b int) (*launch, bool) {
	return broadcastLaunch(q, "intops", op, a, b, q.elems[a])
}
