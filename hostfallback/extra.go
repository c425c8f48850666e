package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// Det, and the float64 helpers the numerically small kernels of the
// loss, signal, detection, image and training families share: they read
// inputs of any float type as float64s and write outputs back in the
// input's type.

func init() {
	Register("Det", detKernel)
}

// isFloatType reports whether dt is one of the float types whose values
// toFloat64s and fromFloat64s convert.
func isFloatType(dt graph.DType) bool {
	switch dt {
	case graph.Float, graph.Double, graph.Float16, graph.BFloat16:
		return true
	}
	return false
}

// floatInput returns input i, which must be present and of a float type,
// and its values as float64s.
func floatInput(c *Call, i int) (*graph.Tensor, []float64, error) {
	t, err := inputTensor(c, i)
	if err != nil {
		return nil, nil, err
	}
	if !isFloatType(t.DType) {
		return nil, nil, c.Unsupported("input %d of type %s", i, t.DType)
	}
	v, _ := toFloat64s(t)
	return t, v, nil
}

// optFloatInput is floatInput for an optional input; v is nil when the
// input is absent.
func optFloatInput(c *Call, i int) (*graph.Tensor, []float64, error) {
	if c.Tensor(i) == nil {
		return nil, nil, nil
	}
	return floatInput(c, i)
}

// floatOutput allocates output i with type dt and shape and stores v in it.
func floatOutput(c *Call, i int, dt graph.DType, shape []int64, v []float64) error {
	if i >= len(c.Out) {
		return nil
	}
	if !fromFloat64s(c.Output(i, dt, shape), v) {
		return c.Unsupported("output type %s", dt)
	}
	return nil
}

// detKernel is Det: the determinant of each square matrix in the last two
// axes, by LU decomposition with partial pivoting in float64.
func detKernel(c *Call) error {
	x, v, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	r := x.Rank()
	if r < 2 || x.Shape[r-1] != x.Shape[r-2] {
		return c.Errorf("input shape %v is not a batch of square matrices", x.Shape)
	}
	n := int(x.Shape[r-1])
	batch := int(graph.NumElements(x.Shape[:r-2]))
	out := make([]float64, batch)
	a := make([]float64, n*n)
	for b := range out {
		copy(a, v[b*n*n:(b+1)*n*n])
		out[b] = luDet(a, n)
	}
	return floatOutput(c, 0, x.DType, x.Shape[:r-2], out)
}

// luDet returns the determinant of the n×n row-major matrix a, which it
// overwrites.
func luDet(a []float64, n int) float64 {
	det := 1.0
	for k := range n {
		p := k
		for i := k + 1; i < n; i++ {
			if math.Abs(a[i*n+k]) > math.Abs(a[p*n+k]) {
				p = i
			}
		}
		if a[p*n+k] == 0 {
			return 0
		}
		if p != k {
			for j := range n {
				a[k*n+j], a[p*n+j] = a[p*n+j], a[k*n+j]
			}
			det = -det
		}
		piv := a[k*n+k]
		det *= piv
		for i := k + 1; i < n; i++ {
			f := a[i*n+k] / piv
			for j := k + 1; j < n; j++ {
				a[i*n+j] -= f * a[k*n+j]
			}
		}
	}
	return det
}
