package vulkan

import (
	"encoding/binary"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// maxPadRank is the highest rank pad.comp handles.
const maxPadRank = 6

// padModes maps Pad's modes to pad.comp's.
var padModes = map[string]int32{"constant": 0, "edge": 1, "reflect": 2, "wrap": 3}

func init() { register("Pad", lowerPad) }

// lowerPad lowers Pad up to rank maxPadRank on any element type of 4 or 8
// bytes: pads, value and axes from constant inputs, negative pads (crops)
// included. Reflection wider than
// the kept input, wrapping with crops and an empty result go to the CPU.
func lowerPad(q *query) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	mode, okMode := padModes[ops.Params[ops.PadParams](q.n, q.opset).Mode]
	if !ok || !okMode || len(x) > maxPadRank {
		return nil, false
	}
	var pads []int64
	value := make([]byte, 8)
	axes := make([]int64, len(x))
	for i := range axes {
		axes[i] = int64(i)
	}
	if pads, ok = q.constInts(1); !ok || len(q.shapes) > 4 {
		return nil, false
	}
	if len(q.shapes) > 2 && q.shapes[2] != nil {
		c := q.consts[2]
		if c == nil || c.DType != q.elems[0] || c.NumElements() != 1 {
			return nil, false
		}
		copy(value, c.Data)
	}
	if len(q.shapes) > 3 && q.shapes[3] != nil {
		if axes, ok = q.constInts(3); !ok {
			return nil, false
		}
	}
	if len(pads) != 2*len(axes) {
		return nil, false
	}
	begin, out := make([]int64, len(x)), append([]int64{}, x...)
	seen := make([]bool, len(x))
	for i, a := range axes {
		k, ok := normAxis(a, len(x))
		if !ok || seen[k] {
			return nil, false
		}
		seen[k] = true
		b, e := pads[i], pads[i+len(axes)]
		kept := x[k] + min(b, 0) + min(e, 0)
		if mode == padModes["reflect"] && max(b, e) >= kept || mode == padModes["wrap"] && min(b, e) < 0 {
			return nil, false
		}
		begin[k], out[k] = b, x[k]+b+e
		if out[k] <= 0 {
			return nil, false
		}
	}
	elems := graph.NumElements(out)
	if int64(w)*elems > q.maxElems {
		return nil, false
	}
	vals := make([]uint32, 4+3*maxPadRank)
	vals[0], vals[1] = uint32(elems), uint32(len(x))
	vals[2], vals[3] = binary.LittleEndian.Uint32(value), binary.LittleEndian.Uint32(value[4:])
	for i := range x {
		vals[4+i], vals[4+maxPadRank+i], vals[4+2*maxPadRank+i] = uint32(out[i]), uint32(x[i]), uint32(int32(begin[i]))
	}
	return &launch{shader: "pad", op: mode<<1 | (w - 1), bindings: []slot{{false, 0}, {true, 0}}, push: words(vals...),
		elems: elems, outShapes: [][]int64{out}, rawInputs: []int{0}, outTypes: []graph.DType{q.elems[0]}}, true
}
