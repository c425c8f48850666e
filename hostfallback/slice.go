package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

func init() {
	Register("Slice", sliceKernel)
}

func sliceKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	var starts, ends, axes, steps []int64
	haveAxes, haveSteps := false, false
	if c.Opset < 10 {
		starts, ends = c.Node.AttrInts("starts", nil), c.Node.AttrInts("ends", nil)
		if a := c.Node.Attr("axes"); a != nil && a.Type == graph.AttrInts {
			axes, haveAxes = a.Ints, true
		}
	} else {
		in := make([][]int64, 5)
		have := make([]bool, 5)
		for i := 1; i < 5; i++ {
			if in[i], have[i], err = intsInput(c, i); err != nil {
				return err
			}
		}
		if !have[1] || !have[2] {
			return c.Errorf("starts and ends are required")
		}
		starts, ends, axes, steps = in[1], in[2], in[3], in[4]
		haveAxes, haveSteps = have[3], have[4]
	}
	n := len(starts)
	if len(ends) != n || (haveAxes && len(axes) != n) || (haveSteps && len(steps) != n) {
		return c.Errorf("starts, ends, axes and steps differ in length (%d, %d, %d, %d)", n, len(ends), len(axes), len(steps))
	}
	r := x.Rank()
	ax := make([]int, n)
	if haveAxes {
		if ax, err = resolveAxes(c, axes, r); err != nil {
			return err
		}
	} else {
		if n > r {
			return c.Errorf("%d starts for a rank-%d input", n, r)
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
			return c.Errorf("step 0 on axis %d", a)
		}
		first[a], shape[a] = sliceRange(starts[i], ends[i], s, x.Shape[a])
		step[a] = s
	}
	strides := stridesOf(x.Shape)
	tabs := make([][]int64, r)
	for k := range tabs {
		tabs[k] = rangeTable(shape[k], first[k]*strides[k], step[k]*strides[k])
	}
	out := c.Output(0, x.DType, shape)
	dst := outCells(out)
	gatherTables(dst, inCells(x), shape, tabs, cells{})
	storeCells(out, dst)
	return nil
}

// sliceRange resolves one axis of a slice as ONNX specifies (negative
// indices count from the back, then clamp) and returns the first index and
// the number of elements taken.
func sliceRange(start, end, step, dim int64) (first, count int64) {
	if start < 0 {
		start += dim
	}
	if end < 0 {
		end += dim
	}
	if step > 0 {
		start, end = min(max(start, 0), dim), min(max(end, 0), dim)
		if end <= start {
			return start, 0
		}
		return start, (end-start-1)/step + 1
	}
	start, end = min(max(start, 0), dim-1), min(max(end, -1), dim-1)
	if start <= end {
		return max(start, 0), 0
	}
	if step == math.MinInt64 {
		return start, 1
	}
	return start, (start-end-1)/-step + 1
}
