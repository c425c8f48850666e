package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("Slice", sliceKernel)
}

func sliceKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	// The plan depends on the values of starts, ends, axes and steps: the
	// key holds those that may change between runs.
	key := c.ShapeKey()
	for i := 1; i < min(len(c.In), 5); i++ {
		if t := c.Tensor(i); t != nil && !c.Const(i) {
			vals, err := indexValues(c, t)
			if err != nil {
				return err
			}
			key = append(append(key, int64(len(vals))), vals...)
		}
	}
	p, err := Memo(c, key, func() (*slicePlan, error) { return newSlicePlan(c, x) })
	if err != nil {
		return err
	}
	out := c.OutputUninit(0, x.DType, p.shape)
	if x.DType.Bits() < 8 {
		out = c.Output(0, x.DType, p.shape)
	}
	dst := outCells(out)
	p.gather.gather(c.Threads, dst, inCells(x), cells{})
	storeCells(out, dst)
	return nil
}

// slicePlan is a Slice's output shape and table gather.
type slicePlan struct {
	shape  []int64
	gather *tableGather
}

// newSlicePlan resolves the node's starts, ends, axes and steps against
// x's shape.
func newSlicePlan(c *Call, x *graph.Tensor) (*slicePlan, error) {
	var err error
	in := make([][]int64, 5)
	have := make([]bool, 5)
	for i := 1; i < 5; i++ {
		if in[i], have[i], err = intsInput(c, i); err != nil {
			return nil, err
		}
	}
	if !have[1] || !have[2] {
		return nil, c.Errorf("starts and ends are required")
	}
	starts, ends, axes, steps := in[1], in[2], in[3], in[4]
	haveAxes, haveSteps := have[3], have[4]
	n := len(starts)
	if len(ends) != n || (haveAxes && len(axes) != n) || (haveSteps && len(steps) != n) {
		return nil, c.Errorf("starts, ends, axes and steps differ in length (%d, %d, %d, %d)", n, len(ends), len(axes), len(steps))
	}
	r := x.Rank()
	ax := make([]int, n)
	if haveAxes {
		if ax, err = resolveAxes(c, axes, r); err != nil {
			return nil, err
		}
	} else {
		if n > r {
			return nil, c.Errorf("%d starts for a rank-%d input", n, r)
		}
		for i := range ax {
			ax[i] = i
		}
	}
	shape := append([]int64{}, x.Shape...)
	first := make([]int64, r)
	step := make([]int64, r)
	for i := range step {
		step[i] = 1
	}
	for i, a := range ax {
		s := int64(1)
		if haveSteps {
			s = steps[i]
		}
		if s == 0 {
			return nil, c.Errorf("step 0 on axis %d", a)
		}
		first[a], shape[a] = ops.SliceRange(starts[i], ends[i], s, x.Shape[a])
		step[a] = s
	}
	strides := graph.Strides(x.Shape)
	tabs := make([][]int64, r)
	for k := range tabs {
		tabs[k] = rangeTable(shape[k], first[k]*strides[k], step[k]*strides[k])
	}
	return &slicePlan{shape: shape, gather: newTableGather(shape, tabs)}, nil
}
