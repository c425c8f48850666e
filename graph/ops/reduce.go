package ops

import (
	"fmt"
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// Reductions: the Reduce family (axes as attribute or input), ArgMax,
// ArgMin, TopK.

func init() {
	for _, name := range []string{"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMean",
		"ReduceSumSquare"} {
		SetInfer("", name, 0, 0, inferReduce(nil))
	}
	SetInfer("", "ReduceSum", 0, 0, inferReduce(reduceSum))
	SetInfer("", "ReduceProd", 0, 0, inferReduce(reduceProd))
	SetInfer("", "ReduceMax", 0, 0, inferReduce(reduceMax))
	SetInfer("", "ReduceMin", 0, 0, inferReduce(reduceMin))
	setRule(inferArgReduce, "ArgMax", "ArgMin")
	setRule(inferTopK, "TopK")
}

// reduceFunc folds element x into the accumulator; first marks the first
// element of a group.
type reduceFunc func(acc *nvals, k int, x *nvals, j int, first bool)

func reduceSum(acc *nvals, k int, x *nvals, j int, first bool) {
	if acc.isFloat() {
		acc.f[k] += x.f[j]
	} else {
		acc.i[k] += x.i[j]
	}
}

func reduceProd(acc *nvals, k int, x *nvals, j int, first bool) {
	if first {
		acc.setInt(k, 1)
	}
	if acc.isFloat() {
		acc.f[k] *= x.f[j]
	} else {
		acc.i[k] *= x.i[j]
	}
}

func reduceMax(acc *nvals, k int, x *nvals, j int, first bool) {
	if acc.isFloat() {
		if first || x.f[j] > acc.f[k] || math.IsNaN(x.f[j]) {
			acc.f[k] = x.f[j]
		}
	} else if first || x.i[j] > acc.i[k] {
		acc.i[k] = x.i[j]
	}
}

func reduceMin(acc *nvals, k int, x *nvals, j int, first bool) {
	if acc.isFloat() {
		if first || x.f[j] < acc.f[k] || math.IsNaN(x.f[j]) {
			acc.f[k] = x.f[j]
		}
	} else if first || x.i[j] < acc.i[k] {
		acc.i[k] = x.i[j]
	}
}

// reducedShape drops (or, with keep, sets to 1) the reduced axes.
func reducedShape(xs graph.Shape, reduced []bool, keep bool) graph.Shape {
	out := graph.Shape{}
	for i, d := range xs {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, graph.DimOf(1))
		}
	}
	return out
}

// inferReduce is the rule of a Reduce op (axes in input 1; see
// Canonicalize); f, when set, computes small known values.
func inferReduce(f reduceFunc) InferFunc {
	return func(c *InferContext) error {
		dt := c.inElem(0)
		xs := c.inShape(0)
		red := ReductionOf(c.Node, c.Opset)
		keep, noop := red.Keepdims != 0, red.NoopWithEmptyAxes != 0
		var axes []int64
		known := true
		if c.has(1) {
			axes, known = c.intsIn(1)
		}
		if xs == nil {
			c.setTensor(0, dt, nil)
			return nil
		}
		if !known {
			switch n := c.lenOf1D(1); {
			case keep:
				c.setTensor(0, dt, unknownShape(len(xs)))
			case n > 0 && n <= len(xs):
				c.setTensor(0, dt, unknownShape(len(xs)-n))
			default:
				c.setTensor(0, dt, nil)
			}
			return nil
		}
		reduced := make([]bool, len(xs))
		if len(axes) == 0 {
			if noop {
				c.set(0, c.in(0).Clone())
				if v := c.val(0); v != nil {
					c.setValue(0, v)
				}
				return nil
			}
			for i := range reduced {
				reduced[i] = true
			}
		} else {
			norm, err := normAxes(axes, len(xs))
			if err != nil {
				return err
			}
			for _, a := range norm {
				reduced[a] = true
			}
		}
		out := reducedShape(xs, reduced, keep)
		c.setTensor(0, dt, out)
		x, ok := decode(c.val(0))
		if f == nil || !ok || len(x.shape) != len(xs) || x.len() == 0 {
			return nil
		}
		keptShape := make([]int64, len(x.shape))
		for i, d := range x.shape {
			keptShape[i] = d
			if reduced[i] {
				keptShape[i] = 1
			}
		}
		acc := newVals(x.dt, keptShape)
		seen := make([]bool, acc.len())
		st := graph.Strides(keptShape)
		j := 0
		forEachIndex(x.shape, func(coord []int64) {
			var k int64
			for i, v := range coord {
				if !reduced[i] {
					k += v * st[i]
				}
			}
			f(acc, int(k), x, j, !seen[k])
			seen[k] = true
			j++
		})
		acc.shape = reducedShape(graph.ShapeOf(x.shape...), reduced, keep).Ints()
		c.setValue(0, acc.tensor())
		return nil
	}
}

// inferArgReduce is ArgMax and ArgMin: int64 indices along axis.
func inferArgReduce(c *InferContext) error {
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, graph.Int64, nil)
		return nil
	}
	p := ArgReduceOf(c.Node, c.Opset)
	axis, err := normAxis(p.Axis, len(xs))
	if err != nil {
		return err
	}
	reduced := make([]bool, len(xs))
	reduced[axis] = true
	c.setTensor(0, graph.Int64, reducedShape(xs, reduced, p.Keepdims != 0))
	return nil
}

// inferTopK gives values and int64 indices with K (input 1) along axis.
func inferTopK(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, nil)
		c.setTensor(1, graph.Int64, nil)
		return nil
	}
	axis, err := normAxis(Params[TopKParams](c.Node, c.Opset).Axis, len(xs))
	if err != nil {
		return err
	}
	k := graph.UnknownDim()
	if v, ok := c.intsIn(1); ok {
		if len(v) != 1 {
			return fmt.Errorf("k holds %d values, want 1", len(v))
		}
		k = graph.DimOf(v[0])
	}
	if k.Known() && xs[axis].Known() && k.Value > xs[axis].Value {
		return fmt.Errorf("k = %d larger than axis %d of size %d", k.Value, axis, xs[axis].Value)
	}
	out := xs.Clone()
	out[axis] = k
	c.setTensor(0, dt, out)
	c.setTensor(1, graph.Int64, out.Clone())
	return nil
}
