package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterChecked("Softmax", softmaxKernel(smSoft), onFloats)
	RegisterChecked("LogSoftmax", softmaxKernel(smLog), onFloats)
	RegisterChecked("Hardmax", softmaxKernel(smHard), onFloats)
}

// softmaxKind selects Softmax, LogSoftmax or Hardmax.
type softmaxKind uint8

const (
	smSoft softmaxKind = iota
	smLog
	smHard
)

// softmaxKernel returns the kernel of Softmax, LogSoftmax or Hardmax. Up to
// opset 12 the input is coerced to 2-D at axis (default 1) and each row of
// the flattened trailing dimensions is normalised; from opset 13 the op
// works along the single axis (default -1). The maximum is subtracted
// before exponentiating, so large inputs do not overflow. Hardmax marks
// the first maximum with 1.
func softmaxKernel(kind softmaxKind) Kernel {
	var k Kernel
	k = func(c *Call) error {
		x, err := inputTensor(c, 0)
		if err != nil {
			return err
		}
		if isHalf(x.DType) {
			return viaFloat32(c, x.DType, k)
		}
		axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, len(x.Shape))
		if err != nil {
			return err
		}
		outer, n, inner := axisGeom(x.Shape, axis)
		if c.Opset < 13 {
			n, inner = n*inner, 1
		}
		y := c.OutputUninit(0, x.DType, x.Shape)
		if y.NumElements() == 0 {
			return nil
		}
		switch x.DType {
		case graph.Float:
			if inner == 1 && kind != smHard {
				softmaxRowsF32(c.Threads, kind == smLog, graph.View[float32](x), graph.View[float32](y), n)
				break
			}
			softmaxTyped(c.Threads, kind, graph.View[float32](x), graph.View[float32](y), outer, n, inner)
		case graph.Double:
			softmaxTyped(c.Threads, kind, graph.View[float64](x), graph.View[float64](y), outer, n, inner)
		default:
			return c.Unsupported("element type %s", x.DType)
		}
		return nil
	}
	return k
}

// softmaxTyped normalises x, viewed as [outer, n, inner], along the
// middle dimension into y.
func softmaxTyped[T floating](threads *Threads, kind softmaxKind, x, y []T, outer, n, inner int) {
	if inner == 1 {
		threads.For(outer, max(1, parallelGrain/n), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				softmaxRow(kind, x[o*n:o*n+n], y[o*n:o*n+n])
			}
		})
		return
	}
	parallelBlocks(threads, outer, inner, n, func() func(b, j0, j1 int) {
		m := make([]float64, 2*min(inner, 2048))
		return func(b, j0, j1 int) {
			w := j1 - j0
			mx, s := m[:w], m[w:2*w]
			base := b*n*inner + j0
			copy64(mx, x[base:base+w])
			for r := 1; r < n; r++ {
				for j, v := range x[base+r*inner : base+r*inner+w] {
					if f := float64(v); f > mx[j] {
						mx[j] = f
					}
				}
			}
			if kind == smHard {
				hardmaxColumns(x, y, mx, base, n, inner)
				return
			}
			for j := range s {
				s[j] = 0
			}
			for r := range n {
				o := base + r*inner
				for j, v := range x[o : o+w] {
					e := math.Exp(float64(v) - mx[j])
					s[j] += e
					if kind == smSoft {
						y[o+j] = T(e)
					}
				}
			}
			if kind == smLog {
				for j := range s {
					s[j] = mx[j] + math.Log(s[j])
				}
				for r := range n {
					o := base + r*inner
					for j, v := range x[o : o+w] {
						y[o+j] = T(float64(v) - s[j])
					}
				}
				return
			}
			for j := range s {
				s[j] = 1 / s[j]
			}
			for r := range n {
				o := base + r*inner
				for j, v := range y[o : o+w] {
					y[o+j] = T(float64(v) * s[j])
				}
			}
		}
	})
}

// softmaxRowsF32 is Softmax (LogSoftmax with log) of float32 data along
// contiguous rows of n elements, in float32 arithmetic with the
// vectorised exp: the sum of a row's exponentials is exact to a few ulp,
// far inside the op's tolerance.
func softmaxRowsF32(threads *Threads, log bool, x, y []float32, n int) {
	threads.For(len(x)/n, max(1, parallelGrain/n), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			xr, yr := x[o*n:o*n+n], y[o*n:o*n+n]
			m := rowMaxF32(xr)
			s := expShiftF32(xr, yr, m)
			if log {
				ls := float32(math.Log(float64(s)))
				for i, v := range xr {
					yr[i] = v - m - ls
				}
				continue
			}
			inv := 1 / s
			for i := range yr {
				yr[i] *= inv
			}
		}
	})
}

// rowMaxF32Go is the portable rowMaxF32: the largest element of x (NaN
// when x holds one, as max gives), −∞ for an empty x. Four running maxima
// keep the comparisons independent.
func rowMaxF32Go(x []float32) float32 {
	inf := float32(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := (*[4]float32)(x[i:])
		m0 = max(m0, v[0])
		m1 = max(m1, v[1])
		m2 = max(m2, v[2])
		m3 = max(m3, v[3])
	}
	for _, v := range x[i:] {
		m0 = max(m0, v)
	}
	return max(max(m0, m1), max(m2, m3))
}

// copy64 sets d[i] = float64(s[i]).
func copy64[T floating](d []float64, s []T) {
	for i, v := range s[:len(d)] {
		d[i] = float64(v)
	}
}

// softmaxRow normalises one contiguous row.
func softmaxRow[T floating](kind softmaxKind, x, y []T) {
	m := math.Inf(-1)
	best := 0
	for i, v := range x {
		if f := float64(v); f > m {
			m, best = f, i
		}
	}
	switch kind {
	case smHard:
		for i := range y {
			y[i] = 0
		}
		y[best] = 1
	case smLog:
		s := 0.0
		for _, v := range x {
			s += math.Exp(float64(v) - m)
		}
		ls := m + math.Log(s)
		for i, v := range x {
			y[i] = T(float64(v) - ls)
		}
	default:
		s := 0.0
		for i, v := range x {
			e := math.Exp(float64(v) - m)
			y[i] = T(e)
			s += e
		}
		inv := 1 / s
		for i, v := range y {
			y[i] = T(float64(v) * inv)
		}
	}
}

// hardmaxColumns writes Hardmax for the columns of one block starting at
// base, whose maxima are mx: 1 at the first row holding the maximum.
func hardmaxColumns[T floating](x, y []T, mx []float64, base, n, inner int) {
	w := len(mx)
	for r := range n {
		o := base + r*inner
		for j := range w {
			y[o+j] = 0
		}
	}
	for j := range w {
		for r := range n {
			if float64(x[base+r*inner+j]) == mx[j] {
				y[base+r*inner+j] = 1
				break
			}
		}
	}
}
