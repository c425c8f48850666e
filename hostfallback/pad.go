package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("Pad", padKernel)
}

// zeroCell returns one cell holding dt's zero value ("" for strings).
func zeroCell(dt graph.DType) cells {
	if dt == graph.String {
		return cells{s: []string{""}}
	}
	size := max(dt.Size(), 1)
	return cells{b: make([]byte, size), size: size}
}

func padKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	r := x.Rank()
	fill := zeroCell(x.DType)
	pads, ok, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	if !ok {
		return c.Errorf("pads missing")
	}
	if v := c.Tensor(2); v != nil {
		if v.DType != x.DType || v.NumElements() != 1 {
			return c.Errorf("constant_value %s must be one %s", v.ValueType(), x.DType)
		}
		fill = inCells(v)
	}
	if pads, err = padsForAxes(c, pads, r); err != nil {
		return err
	}
	if len(pads) != 2*r {
		return c.Errorf("%d pads for a rank-%d input", len(pads), r)
	}
	mode := ops.Params[ops.PadParams](c.Node, c.Opset).Mode
	switch mode {
	case "constant", "edge", "reflect", "wrap":
	default:
		return c.Errorf("unknown mode %q", mode)
	}
	shape := make([]int64, r)
	for k, n := range x.Shape {
		before, after := pads[k], pads[k+r]
		if before > graph.MaxBytes || after > graph.MaxBytes || before < -n || after < -n || n+before+after < 0 {
			return c.Errorf("pads %v do not fit axis %d of size %d", pads, k, n)
		}
		shape[k] = n + before + after
	}
	if err := c.Check(x.DType, shape); err != nil {
		return err
	}
	if graph.NumElements(shape) == 0 {
		// Before the per-axis tables: an axis beside an empty one may be
		// too long to tabulate.
		c.Output(0, x.DType, shape)
		return nil
	}
	tabs := make([][]int64, r)
	strides := graph.Strides(x.Shape)
	for k, n := range x.Shape {
		before, after := pads[k], pads[k+r]
		tab := make([]int64, shape[k])
		if mode == "constant" {
			for i := range tab {
				tab[i] = outside
				if j := int64(i) - before; j >= 0 && j < n {
					tab[i] = j * strides[k]
				}
			}
			tabs[k] = tab
			continue
		}
		// Negative pads crop first; the other modes then pad the rest.
		lo := max(0, -before)
		m := n - lo - max(0, -after)
		if m <= 0 && shape[k] > 0 {
			return c.Errorf("mode %s cannot pad empty axis %d", mode, k)
		}
		for i := range tab {
			tab[i] = (lo + padSource(mode, int64(i)-max(before, 0), m)) * strides[k]
		}
		tabs[k] = tab
	}
	out := c.Output(0, x.DType, shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(x), shape, tabs, fill)
	storeCells(out, dst)
	return nil
}

// padsForAxes spreads Pad-18's pads, given for the axes input only, over
// all r axes.
func padsForAxes(c *Call, pads []int64, r int) ([]int64, error) {
	axes, ok, err := intsInput(c, 3)
	if err != nil || !ok {
		return pads, err
	}
	ax, err := resolveAxes(c, axes, r)
	if err != nil {
		return nil, err
	}
	if len(pads) != 2*len(ax) {
		return nil, c.Errorf("%d pads for %d axes", len(pads), len(ax))
	}
	full := make([]int64, 2*r)
	for i, a := range ax {
		full[a], full[a+r] = pads[i], pads[i+len(ax)]
	}
	return full, nil
}

// padSource maps position j (relative to the first kept element, possibly
// outside [0, m)) to the element of an axis of length m that the edge,
// reflect or wrap mode reads.
func padSource(mode string, j, m int64) int64 {
	switch mode {
	case "edge":
		return min(max(j, 0), m-1)
	case "wrap":
		return (j%m + m) % m
	}
	if m == 1 {
		return 0
	}
	p := 2 * (m - 1)
	j = (j%p + p) % p
	if j >= m {
		j = p - j
	}
	return j
}
