package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterChecked("Gemm", gemmKernel, Support{In: []Types{productTypes}})
}

// gemmKernel is ONNX Gemm: Y = alpha·op(A)·op(B) + beta·C with A and B 2-D
// and C broadcast unidirectionally to M×N (before opset 7 only when the
// broadcast attribute is set; otherwise C must be M×N).
func gemmKernel(c *Call) error {
	a, b := c.Tensor(0), c.Tensor(1)
	if a == nil || b == nil {
		return c.Errorf("inputs A and B are required")
	}
	if a.DType != b.DType {
		return c.Errorf("A is %s but B is %s", a.DType, b.DType)
	}
	if a.Rank() != 2 || b.Rank() != 2 {
		return c.Errorf("A%v and B%v must be 2-D", a.Shape, b.Shape)
	}
	p := ops.Params[ops.GemmParams](c.Node, c.Opset)
	transA, transB, alpha, beta := p.TransA != 0, p.TransB != 0, p.Alpha, p.Beta
	m, k := int(a.Shape[0]), int(a.Shape[1])
	if transA {
		m, k = k, m
	}
	kb, n := int(b.Shape[0]), int(b.Shape[1])
	if transB {
		kb, n = n, kb
	}
	if k != kb {
		return c.Errorf("op(A) is %d×%d but op(B) is %d×%d", m, k, kb, n)
	}
	ct := c.Tensor(2)
	if ct == nil && c.Opset < 11 {
		return c.Errorf("input C is required before opset 11")
	}
	var rowStride, colStride int
	if ct != nil {
		if ct.DType != a.DType {
			return c.Errorf("C is %s but A is %s", ct.DType, a.DType)
		}
		var ok bool
		rowStride, colStride, ok = gemmBiasStrides(ct.Shape, m, n)
		if !ok || (c.Opset < 7 && p.Broadcast == 0 && (ct.Rank() != 2 || ct.Shape[0] != int64(m) || ct.Shape[1] != int64(n))) {
			return c.Errorf("C%v does not broadcast to [%d %d]", ct.Shape, m, n)
		}
	}
	y := c.Output(0, a.DType, []int64{int64(m), int64(n)})
	lda, ldb := int(a.Shape[1]), int(b.Shape[1])
	switch {
	case a.DType == graph.Double:
		gemmOther(graph.View[float64](a), graph.View[float64](b), gemmBiasView[float64](ct), graph.View[float64](y), transA, transB, m, n, k, lda, ldb, rowStride, colStride, alpha, beta)
	case f32Family(a.DType):
		out := f32Target(y)
		if ct == nil || beta == 0 {
			beta = 0
		} else {
			cv := f32Data(ct)
			for i := range m {
				row := out[i*n : (i+1)*n]
				for j := range row {
					row[j] = cv[i*rowStride+j*colStride]
				}
			}
		}
		if a.DType == graph.Float && c.Const(1) && alpha != 0 && matmulPrepacks(m, n, k) {
			// A constant B (a layer's weight) is packed once, shared
			// with every plan that multiplies by it.
			pw, err := Memo(c, c.ShapeKey(), func() (*packedWeight, error) { return sharedPack(b, transB, k, n), nil })
			if err != nil {
				return err
			}
			gemmPrepacked(c.Threads, transA, m, n, k, alpha, f32Data(a), lda, pw.data, beta, out, n)
		} else {
			sgemm(c.Threads, transA, transB, m, n, k, alpha, f32Data(a), lda, f32Data(b), ldb, beta, out, n)
		}
		f32Commit(y, out)
	case a.DType == graph.Int32:
		gemmOther(graph.View[int32](a), graph.View[int32](b), gemmBiasView[int32](ct), graph.View[int32](y), transA, transB, m, n, k, lda, ldb, rowStride, colStride, alpha, beta)
	case a.DType == graph.Int64:
		gemmOther(graph.View[int64](a), graph.View[int64](b), gemmBiasView[int64](ct), graph.View[int64](y), transA, transB, m, n, k, lda, ldb, rowStride, colStride, alpha, beta)
	case a.DType == graph.Uint32:
		gemmOther(graph.View[uint32](a), graph.View[uint32](b), gemmBiasView[uint32](ct), graph.View[uint32](y), transA, transB, m, n, k, lda, ldb, rowStride, colStride, alpha, beta)
	case a.DType == graph.Uint64:
		gemmOther(graph.View[uint64](a), graph.View[uint64](b), gemmBiasView[uint64](ct), graph.View[uint64](y), transA, transB, m, n, k, lda, ldb, rowStride, colStride, alpha, beta)
	default:
		return c.Unsupported("Gemm of %s", a.DType)
	}
	return nil
}

// gemmBiasStrides returns the element strides along rows and columns of a
// C of the given shape broadcast unidirectionally to m×n (0 along a
// broadcast axis); ok is false when it does not broadcast.
func gemmBiasStrides(shape []int64, m, n int) (rowStride, colStride int, ok bool) {
	var rows, cols int64 = 1, 1
	switch len(shape) {
	case 0:
	case 1:
		cols = shape[0]
	case 2:
		rows, cols = shape[0], shape[1]
	default:
		return 0, 0, false
	}
	if (rows != 1 && rows != int64(m)) || (cols != 1 && cols != int64(n)) {
		return 0, 0, false
	}
	if cols != 1 {
		colStride = 1
	}
	if rows != 1 {
		rowStride = int(cols)
	}
	return rowStride, colStride, true
}

// gemmBiasView is graph.View for an optional C.
func gemmBiasView[T graph.Elem](t *graph.Tensor) []T {
	if t == nil {
		return nil
	}
	return graph.View[T](t)
}

// gemmOther is Gemm for float64 and the integer types: the product is
// computed in T and alpha and beta are applied in float64, as the ONNX
// reference does.
func gemmOther[T matmulNum](a, b, cv, y []T, transA, transB bool, m, n, k, lda, ldb, rowStride, colStride int, alpha, beta float32) {
	matmulLoop(transA, transB, m, n, k, a, lda, b, ldb, y, n)
	for i := range m {
		for j := range n {
			v := float64(alpha) * float64(y[i*n+j])
			if cv != nil {
				v += float64(beta) * float64(cv[i*rowStride+j*colStride])
			}
			y[i*n+j] = T(v)
		}
	}
}
