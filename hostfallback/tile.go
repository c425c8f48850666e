package hostfallback

import "github.com/onnxvk/onnxvk/graph"

func init() {
	Register("Tile", tileKernel)
}

func tileKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	r := x.Rank()
	var reps []int64
	if c.Opset < 6 {
		tiles, err := scalarInt(c, 1)
		if err != nil {
			return err
		}
		a, err := scalarInt(c, 2)
		if err != nil {
			return err
		}
		axis, err := resolveAxis(c, a, r)
		if err != nil {
			return err
		}
		reps = make([]int64, r)
		for i := range reps {
			reps[i] = 1
		}
		reps[axis] = tiles
	} else {
		var ok bool
		if reps, ok, err = intsInput(c, 1); err != nil {
			return err
		}
		if !ok || len(reps) != r {
			return c.Errorf("repeats %v for a rank-%d input", reps, r)
		}
	}
	// Output axis k, of size reps[k]*d, is walked as the pair (rep, i) with
	// table 0 for rep and i*stride for i.
	strides := graph.Strides(x.Shape)
	shape := make([]int64, r)
	pairShape := make([]int64, 2*r)
	tabs := make([][]int64, 2*r)
	for k, d := range x.Shape {
		if reps[k] < 0 {
			return c.Errorf("negative repeat %d", reps[k])
		}
		pairShape[2*k], pairShape[2*k+1] = reps[k], d
	}
	if err := c.Check(x.DType, pairShape); err != nil {
		return err
	}
	for k, d := range x.Shape {
		shape[k] = reps[k] * d
		tabs[2*k], tabs[2*k+1] = make([]int64, reps[k]), rangeTable(d, 0, strides[k])
	}
	out := c.Output(0, x.DType, shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(x), pairShape, tabs, cells{})
	storeCells(out, dst)
	return nil
}

// scalarInt returns input i, a one-element integer tensor, as an int64.
func scalarInt(c *Call, i int) (int64, error) {
	v, ok, err := intsInput(c, i)
	if err != nil {
		return 0, err
	}
	if !ok || len(v) != 1 {
		return 0, c.Errorf("input %d must be one integer", i)
	}
	return v[0], nil
}
