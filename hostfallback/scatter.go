package hostfallback

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Indexed writes: ScatterElements, its deprecated form Scatter, and
// ScatterND. The output is a copy of data with updates written (or, from
// opset 16, combined by the reduction) at the indexed places, in order, so
// that with reduction "none" the last of duplicate indices wins.

func init() {
	Register("ScatterElements", scatterElementsKernel)
	Register("Scatter", scatterElementsKernel)
	Register("ScatterND", scatterNDKernel)
}

// scatterArgs returns data, indices, updates and the reduction.
func scatterArgs(c *Call) (data, indices, updates *graph.Tensor, reduction string, err error) {
	if data, err = inputTensor(c, 0); err != nil {
		return
	}
	if indices, err = inputTensor(c, 1); err != nil {
		return
	}
	if updates, err = inputTensor(c, 2); err != nil {
		return
	}
	if updates.DType != data.DType {
		err = c.Errorf("updates type %s differs from data type %s", updates.DType, data.DType)
		return
	}
	reduction = "none" // Scatter, which has no reduction attribute
	if p := ops.ReductionModeOf(c.Node, c.Opset); p != nil {
		reduction = p.Reduction
	}
	if !slices.Contains([]string{"none", "add", "mul", "max", "min"}, reduction) {
		err = c.Errorf("unknown reduction %q", reduction)
	}
	return
}

func scatterElementsKernel(c *Call) error {
	data, indices, updates, reduction, err := scatterArgs(c)
	if err != nil {
		return err
	}
	if !slices.Equal(indices.Shape, updates.Shape) {
		return c.Errorf("indices shape %v and updates shape %v differ", indices.Shape, updates.Shape)
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, data.Rank())
	if err != nil {
		return err
	}
	offs, err := elementOffsets(c, data.Shape, indices, axis)
	if err != nil {
		return err
	}
	return scatterInto(c, data, updates, offs, 1, reduction)
}

func scatterNDKernel(c *Call) error {
	data, indices, updates, reduction, err := scatterArgs(c)
	if err != nil {
		return err
	}
	offs, slice, err := ndOffsets(c, data.Shape, indices, 0)
	if err != nil {
		return err
	}
	q, k := indices.Rank(), indices.Shape[indices.Rank()-1]
	want := append(append([]int64{}, indices.Shape[:q-1]...), data.Shape[k:]...)
	if !slices.Equal(updates.Shape, want) {
		return c.Errorf("updates shape %v, want %v", updates.Shape, want)
	}
	return scatterInto(c, data, updates, offs, slice, reduction)
}

// scatterInto writes output 0 as data with slice-element runs of updates
// stored or reduced at the offsets offs, in order.
func scatterInto(c *Call, data, updates *graph.Tensor, offs []int64, slice int64, reduction string) error {
	out := c.Output(0, data.DType, data.Shape)
	copyTensor(out, data)
	if reduction == "none" {
		dst := inCells(out)
		scatterCells(dst, inCells(updates), offs, slice)
		storeCells(out, dst)
		return nil
	}
	combine := reducer(data.DType, reduction)
	if combine == nil {
		return c.Unsupported("reduction %q on %s", reduction, data.DType)
	}
	size := int64(data.DType.Size())
	n := slice * size
	for t, off := range offs {
		combine(out.Data[off*size:off*size+n], updates.Data[int64(t)*n:int64(t+1)*n])
	}
	return nil
}

// scatterCells copies run t of src (slice cells) to offs[t] of dst, in
// order.
func scatterCells(dst, src cells, offs []int64, slice int64) {
	if slice != 1 {
		for t, off := range offs {
			copyCells(dst, off, src, int64(t)*slice, slice)
		}
		return
	}
	switch dst.size {
	case 0:
		scatterT(dst.s, src.s, offs)
	case 1:
		scatterT(dst.b, src.b, offs)
	case 2:
		scatterT(cellsAs[[2]byte](dst.b), cellsAs[[2]byte](src.b), offs)
	case 4:
		scatterT(cellsAs[[4]byte](dst.b), cellsAs[[4]byte](src.b), offs)
	case 8:
		scatterT(cellsAs[[8]byte](dst.b), cellsAs[[8]byte](src.b), offs)
	default:
		scatterT(cellsAs[[16]byte](dst.b), cellsAs[[16]byte](src.b), offs)
	}
}

func scatterT[T any](dst, src []T, offs []int64) {
	for t, off := range offs {
		dst[off] = src[t]
	}
}

// reducer returns the function that combines src into dst element-wise
// (both the bytes of whole elements of dt) for a scatter reduction, or nil
// when dt has no arithmetic.
func reducer(dt graph.DType, op string) func(dst, src []byte) {
	switch dt {
	case graph.Float:
		return reduceTyped[float32](op)
	case graph.Double:
		return reduceTyped[float64](op)
	case graph.Int8:
		return reduceTyped[int8](op)
	case graph.Uint8:
		return reduceTyped[uint8](op)
	case graph.Int16:
		return reduceTyped[int16](op)
	case graph.Uint16:
		return reduceTyped[uint16](op)
	case graph.Int32:
		return reduceTyped[int32](op)
	case graph.Uint32:
		return reduceTyped[uint32](op)
	case graph.Int64:
		return reduceTyped[int64](op)
	case graph.Uint64:
		return reduceTyped[uint64](op)
	case graph.Float16:
		return reduceHalf(op, f16ToF32, f32ToF16)
	case graph.BFloat16:
		return reduceHalf(op, graph.BFloat16ToFloat32, graph.Float32ToBFloat16)
	}
	return nil
}

func combiner[T number](op string) func(a, b T) T {
	switch op {
	case "add":
		return func(a, b T) T { return a + b }
	case "mul":
		return func(a, b T) T { return a * b }
	case "max":
		return func(a, b T) T {
			if b != b || b > a {
				return b
			}
			return a
		}
	}
	return func(a, b T) T {
		if b != b || b < a {
			return b
		}
		return a
	}
}

func reduceTyped[T number](op string) func(dst, src []byte) {
	f := combiner[T](op)
	return func(dst, src []byte) {
		d, s := typedView[T](dst), typedView[T](src)
		for i := range d {
			d[i] = f(d[i], s[i])
		}
	}
}

func reduceHalf(op string, wide func(uint16) float32, round func(float32) uint16) func(dst, src []byte) {
	f := combiner[float32](op)
	return func(dst, src []byte) {
		d, s := typedView[uint16](dst), typedView[uint16](src)
		for i := range d {
			d[i] = round(f(wide(d[i]), wide(s[i])))
		}
	}
}
