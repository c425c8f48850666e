package hostfallback

import "github.com/onnxvk/onnxvk/graph"

func init() {
	Register("Expand", expandKernel)
}

func expandKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	want, ok, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	if !ok {
		return c.Errorf("shape missing")
	}
	r := max(len(want), x.Rank())
	shape := make([]int64, r)
	tabs := make([][]int64, r)
	strides := graph.Strides(x.Shape)
	for k := range shape {
		in, w := int64(1), int64(1)
		if j := k - (r - x.Rank()); j >= 0 {
			in = x.Shape[j]
		}
		if j := k - (r - len(want)); j >= 0 {
			w = want[j]
		}
		switch {
		case in == w || w == 1:
			shape[k] = in
		case in == 1 && w >= 0:
			shape[k] = w
		default:
			return c.Errorf("cannot expand %v to %v", x.Shape, want)
		}
	}
	if err := c.Check(x.DType, shape); err != nil {
		return err
	}
	for k := range shape {
		if j := k - (r - x.Rank()); j >= 0 && x.Shape[j] == shape[k] {
			tabs[k] = rangeTable(shape[k], 0, strides[j])
		} else {
			tabs[k] = make([]int64, shape[k])
		}
	}
	out := c.Output(0, x.DType, shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(x), shape, tabs, cells{})
	storeCells(out, dst)
	return nil
}
