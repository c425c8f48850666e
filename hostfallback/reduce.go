package hostfallback

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	for name, r := range map[string]reduceSpec{
		"ReduceSum":       {kind: redSum},
		"ReduceMean":      {kind: redSum, post: postMean},
		"ReduceMax":       {kind: redMax},
		"ReduceMin":       {kind: redMin},
		"ReduceProd":      {kind: redProd},
		"ReduceL1":        {kind: redL1},
		"ReduceL2":        {kind: redSumSquare, post: postSqrt},
		"ReduceSumSquare": {kind: redSumSquare},
		"ReduceLogSum":    {kind: redSum, post: postLog},
		"ReduceLogSumExp": {kind: redSumExp, post: postLogSumExp},
	} {
		RegisterChecked(name, reduceKernel(r), Support{In: []Types{r.types(), nil}})
	}
	Register("ArgMax", argKernel(true))
	Register("ArgMin", argKernel(false))
	Register("CumSum", cumSumKernel)
}

// reduceKind is how a reduction combines elements.
type reduceKind uint8

const (
	redSum       reduceKind = iota
	redProd                 // product
	redMax                  // maximum; NaN wins
	redMin                  // minimum; NaN wins
	redSumSquare            // sum of squares
	redL1                   // sum of absolute values
	redSumExp               // sum of e^(x - shift), shift the maximum
)

// reducePost is what a reduction does to each combined value.
type reducePost uint8

const (
	postNone reducePost = iota
	postMean
	postSqrt
	postLog
	postLogSumExp // log of the sum plus the shift
)

// reduceSpec describes one Reduce* op.
type reduceSpec struct {
	kind reduceKind
	post reducePost
}

// accum is the type reductions accumulate in: float64 for float types,
// int64 or uint64 for integers (wrapping as the element type would).
type accum interface{ ~float64 | ~int64 | ~uint64 }

// reduceGeom is the iteration space of a reduction over a contiguous
// tensor, with size-1 dimensions dropped and adjacent dimensions of the
// same kind (kept or reduced) merged. The innermost group has length inner;
// the other groups are split into kept and reduced lists with their input
// strides.
type reduceGeom struct {
	outN, count  int // output elements; elements each output combines
	inner        int
	innerReduced bool
	keptDims     []int
	keptStrides  []int
	redDims      []int
	redStrides   []int
	redOuter     int // product of redDims
}

// newReduceGeom plans the reduction of a tensor of the given shape, with no
// zero dimension, over the dimensions marked in reduced.
func newReduceGeom(shape []int64, reduced []bool) *reduceGeom {
	var dims []int
	var red []bool
	for i, d := range shape {
		switch {
		case d == 1:
		case len(dims) > 0 && red[len(red)-1] == reduced[i]:
			dims[len(dims)-1] *= int(d)
		default:
			dims = append(dims, int(d))
			red = append(red, reduced[i])
		}
	}
	if len(dims) == 0 {
		dims, red = []int{1}, []bool{false}
	}
	last := len(dims) - 1
	g := &reduceGeom{outN: 1, count: 1, redOuter: 1, inner: dims[last], innerReduced: red[last]}
	stride := dims[last]
	for i := last - 1; i >= 0; i-- {
		if red[i] {
			g.redDims = append([]int{dims[i]}, g.redDims...)
			g.redStrides = append([]int{stride}, g.redStrides...)
			g.redOuter *= dims[i]
		} else {
			g.keptDims = append([]int{dims[i]}, g.keptDims...)
			g.keptStrides = append([]int{stride}, g.keptStrides...)
		}
		stride *= dims[i]
	}
	for i, d := range dims {
		if red[i] {
			g.count *= d
		} else {
			g.outN *= d
		}
	}
	return g
}

// odometer walks the multi-indices of dims in row-major order, tracking
// the offset they give with strides.
type odometer struct {
	dims, strides, idx []int
	off                int
}

// newOdometer returns an odometer positioned at linear index pos.
func newOdometer(dims, strides []int, pos int) *odometer {
	o := &odometer{dims: dims, strides: strides, idx: make([]int, len(dims))}
	o.seek(pos)
	return o
}

// seek positions o at linear index pos.
func (o *odometer) seek(pos int) {
	o.off = 0
	for d := len(o.dims) - 1; d >= 0; d-- {
		o.idx[d] = pos % o.dims[d]
		pos /= o.dims[d]
		o.off += o.idx[d] * o.strides[d]
	}
}

// next advances o by one position, wrapping to the start after the last.
func (o *odometer) next() {
	for d := len(o.dims) - 1; d >= 0; d-- {
		o.idx[d]++
		o.off += o.strides[d]
		if o.idx[d] < o.dims[d] {
			return
		}
		o.idx[d] = 0
		o.off -= o.dims[d] * o.strides[d]
	}
}

// parallelBlocks runs f over blocks × [0, cols), split into units of one
// block and a stretch of columns, in parallel. work is the cost of one
// column in elements, for sizing chunks. start is called once per chunk
// of units to make f, so f may keep scratch state.
func parallelBlocks(threads *Threads, blocks, cols, work int, start func() func(b, j0, j1 int)) {
	chunk := min(cols, 2048)
	per := (cols + chunk - 1) / chunk
	grain := max(1, parallelGrain/max(1, work*chunk))
	threads.For(blocks*per, grain, func(lo, hi int) {
		f := start()
		for u := lo; u < hi; u++ {
			j := u % per * chunk
			f(u/per, j, min(j+chunk, cols))
		}
	})
}

// types returns the element types reduceTensor has a case for under r:
// the floats and integers, and bool for ReduceMax and ReduceMin.
func (r reduceSpec) types() Types {
	ts := append(slices.Clone(floats), ints...)
	if r.kind == redMax || r.kind == redMin {
		ts = append(ts, graph.Bool)
	}
	return ts
}

// reduceKernel returns the kernel of a Reduce* op: axes from the optional
// second input; absent or empty
// axes reduce every axis unless noop_with_empty_axes is set, which makes
// the op the identity. Reducing over an empty set gives the reduction's
// identity: 0 for sums, 1 for products, -Inf (or the type's minimum) for
// max, +Inf (or maximum) for min, NaN for a float mean.
func reduceKernel(r reduceSpec) Kernel {
	var k Kernel
	k = func(c *Call) error {
		x, err := inputTensor(c, 0)
		if err != nil {
			return err
		}
		if isHalf(x.DType) {
			return viaFloat32(c, x.DType, k)
		}
		axes, _, err := intsInput(c, 1)
		if err != nil {
			return err
		}
		if len(axes) == 0 && ops.ReductionOf(c.Node, c.Opset).NoopWithEmptyAxes != 0 {
			copyTensor(c.Output(0, x.DType, x.Shape), x)
			return nil
		}
		ax, err := resolveAxes(c, axes, len(x.Shape))
		if err != nil {
			return err
		}
		reduced := make([]bool, len(x.Shape))
		for _, a := range ax {
			reduced[a] = true
		}
		if len(ax) == 0 {
			for i := range reduced {
				reduced[i] = true
			}
		}
		keep := ops.ReductionOf(c.Node, c.Opset).Keepdims != 0
		var out []int64
		for i, d := range x.Shape {
			switch {
			case !reduced[i]:
				out = append(out, d)
			case keep:
				out = append(out, 1)
			}
		}
		y := c.Output(0, x.DType, out)
		if y.NumElements() == 0 {
			return nil
		}
		return reduceTensor(c, r, y, x, reduced)
	}
	return k
}

// reduceTensor reduces x, of a type r.types() holds, into y over the
// dimensions marked in reduced.
func reduceTensor(c *Call, r reduceSpec, y, x *graph.Tensor, reduced []bool) error {
	if x.DType.IsInt() && (r.kind == redSumExp || r.post == postSqrt || r.post == postLog) {
		xf := graph.NewTensor(graph.Double, x.Shape)
		yf := graph.NewTensor(graph.Double, y.Shape)
		if err := castTensor(c.Threads, xf, x, castOptions{}); err != nil {
			return c.Errorf("%w", err)
		}
		if err := reduceTensor(c, r, yf, xf, reduced); err != nil {
			return err
		}
		return castTensor(c.Threads, y, yf, castOptions{})
	}
	g := &reduceGeom{outN: int(y.NumElements())}
	if x.NumElements() > 0 {
		g = newReduceGeom(x.Shape, reduced)
	}
	switch x.DType {
	case graph.Float:
		reduceAs[float32, float64](c.Threads, r, g, graph.View[float32](x), graph.View[float32](y))
	case graph.Double:
		reduceAs[float64, float64](c.Threads, r, g, graph.View[float64](x), graph.View[float64](y))
	case graph.Int8:
		reduceAs[int8, int64](c.Threads, r, g, graph.View[int8](x), graph.View[int8](y))
	case graph.Int16:
		reduceAs[int16, int64](c.Threads, r, g, graph.View[int16](x), graph.View[int16](y))
	case graph.Int32:
		reduceAs[int32, int64](c.Threads, r, g, graph.View[int32](x), graph.View[int32](y))
	case graph.Int64:
		reduceAs[int64, int64](c.Threads, r, g, graph.View[int64](x), graph.View[int64](y))
	case graph.Uint8, graph.Bool:
		reduceAs[uint8, uint64](c.Threads, r, g, x.Data, y.Data)
	case graph.Uint16:
		reduceAs[uint16, uint64](c.Threads, r, g, graph.View[uint16](x), graph.View[uint16](y))
	case graph.Uint32:
		reduceAs[uint32, uint64](c.Threads, r, g, graph.View[uint32](x), graph.View[uint32](y))
	case graph.Uint64:
		reduceAs[uint64, uint64](c.Threads, r, g, graph.View[uint64](x), graph.View[uint64](y))
	default:
		return c.Unsupported("element type %s", x.DType)
	}
	return nil
}

// reduceAs reduces x into y as r says, accumulating in A.
func reduceAs[T realNumber, A accum](threads *Threads, r reduceSpec, g *reduceGeom, x, y []T) {
	acc := make([]A, g.outN)
	var shift []A
	if r.kind == redSumExp {
		shift = make([]A, g.outN)
		reduceInto(threads, redMax, g, x, shift, nil)
		for i, s := range shift {
			if f := float64(s); math.IsInf(f, 0) || f != f {
				shift[i] = 0
			}
		}
	}
	reduceInto(threads, r.kind, g, x, acc, shift)
	n := A(g.count)
	for i, a := range acc {
		switch r.post {
		case postNone:
			y[i] = T(a)
		case postMean:
			if n == 0 && isIntegerType[A]() {
				y[i] = 0
			} else {
				y[i] = T(a / n)
			}
		case postSqrt:
			y[i] = T(math.Sqrt(float64(a)))
		case postLog:
			y[i] = T(math.Log(float64(a)))
		case postLogSumExp:
			y[i] = T(math.Log(float64(a)) + float64(shift[i]))
		}
	}
}

// identityOf is the value a reduction of kind k starts from.
func identityOf[T realNumber, A accum](k reduceKind) A {
	lo, hi := typeLimits[T]()
	switch k {
	case redProd:
		return 1
	case redMax:
		return A(lo)
	case redMin:
		return A(hi)
	}
	return 0
}

// reduceInto combines the elements of x into acc (one value per output
// element) by kind k; shift holds the per-output shifts of redSumExp.
func reduceInto[T realNumber, A accum](threads *Threads, k reduceKind, g *reduceGeom, x []T, acc, shift []A) {
	init := identityOf[T, A](k)
	if g.count == 0 {
		for i := range acc {
			acc[i] = init
		}
		return
	}
	if g.innerReduced {
		threads.For(g.outN, max(1, parallelGrain/g.count), func(lo, hi int) {
			kept := newOdometer(g.keptDims, g.keptStrides, lo)
			red := newOdometer(g.redDims, g.redStrides, 0)
			var sh A
			for o := lo; o < hi; o++ {
				if shift != nil {
					sh = shift[o]
				}
				a := init
				for range g.redOuter {
					off := kept.off + red.off
					a = combine(k, a, reduceSegment(k, x[off:off+g.inner], sh))
					red.next()
				}
				acc[o] = a
				kept.next()
			}
		})
		return
	}
	parallelBlocks(threads, g.outN/g.inner, g.inner, g.count, func() func(b, j0, j1 int) {
		kept := newOdometer(g.keptDims, g.keptStrides, 0)
		red := newOdometer(g.redDims, g.redStrides, 0)
		return func(b, j0, j1 int) {
			kept.seek(b)
			base := b * g.inner
			a := acc[base+j0 : base+j1]
			for j := range a {
				a[j] = init
			}
			var sh []A
			if shift != nil {
				sh = shift[base+j0 : base+j1]
			}
			for range g.redOuter {
				off := kept.off + red.off
				accumulateRow(k, a, x[off+j0:off+j1], sh)
				red.next()
			}
		}
	})
}

// combine merges two partial results of kind k.
func combine[A accum](k reduceKind, a, b A) A {
	switch k {
	case redProd:
		return a * b
	case redMax:
		return max(a, b)
	case redMin:
		return min(a, b)
	}
	return a + b
}

// reduceSegment reduces a contiguous run of elements by kind k.
func reduceSegment[T realNumber, A accum](k reduceKind, s []T, shift A) A {
	var a A
	switch k {
	case redSum:
		for _, v := range s {
			a += A(v)
		}
	case redProd:
		a = 1
		for _, v := range s {
			a *= A(v)
		}
	case redMax:
		a = A(s[0])
		for _, v := range s[1:] {
			a = max(a, A(v))
		}
	case redMin:
		a = A(s[0])
		for _, v := range s[1:] {
			a = min(a, A(v))
		}
	case redSumSquare:
		for _, v := range s {
			a += A(v) * A(v)
		}
	case redL1:
		for _, v := range s {
			if v < 0 {
				v = -v
			}
			a += A(v)
		}
	case redSumExp:
		f := float64(shift)
		for _, v := range s {
			a += A(math.Exp(float64(v) - f))
		}
	}
	return a
}

// accumulateRow combines row into a elementwise by kind k; shift holds
// the shifts of redSumExp.
func accumulateRow[T realNumber, A accum](k reduceKind, a []A, row []T, shift []A) {
	row = row[:len(a)]
	switch k {
	case redSum:
		for j, v := range row {
			a[j] += A(v)
		}
	case redProd:
		for j, v := range row {
			a[j] *= A(v)
		}
	case redMax:
		for j, v := range row {
			a[j] = max(a[j], A(v))
		}
	case redMin:
		for j, v := range row {
			a[j] = min(a[j], A(v))
		}
	case redSumSquare:
		for j, v := range row {
			a[j] += A(v) * A(v)
		}
	case redL1:
		for j, v := range row {
			if v < 0 {
				v = -v
			}
			a[j] += A(v)
		}
	case redSumExp:
		shift = shift[:len(a)]
		for j, v := range row {
			a[j] += A(math.Exp(float64(v) - float64(shift[j])))
		}
	}
}

// axisGeom splits shape around axis into the product of the dimensions
// before it, its size and the product of those after it.
func axisGeom(shape []int64, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for _, d := range shape[:axis] {
		outer *= int(d)
	}
	for _, d := range shape[axis+1:] {
		inner *= int(d)
	}
	return outer, int(shape[axis]), inner
}

// argKernel is ArgMax (isMax) or ArgMin (all versions): int64 indices of
// the extreme element along axis (default 0), the first one unless
// select_last_index (opset 12+) is set; keepdims defaults to 1. NaN counts
// as the extreme value, as in numpy.
func argKernel(isMax bool) Kernel {
	var k Kernel
	k = func(c *Call) error {
		x, err := inputTensor(c, 0)
		if err != nil {
			return err
		}
		if isHalf(x.DType) {
			return viaFloat32(c, x.DType, k)
		}
		p := ops.ArgReduceOf(c.Node, c.Opset)
		axis, err := resolveAxis(c, p.Axis, len(x.Shape))
		if err != nil {
			return err
		}
		outer, n, inner := axisGeom(x.Shape, axis)
		out := append([]int64{}, x.Shape...)
		if p.Keepdims != 0 {
			out[axis] = 1
		} else {
			out = append(out[:axis], out[axis+1:]...)
		}
		if n == 0 && outer*inner > 0 {
			return c.Errorf("axis %d is empty", axis)
		}
		y := graph.View[int64](c.Output(0, graph.Int64, out))
		last := p.SelectLastIndex != 0
		if outer*inner == 0 {
			return nil
		}
		switch x.DType {
		case graph.Float:
			argTyped(c.Threads, isMax, last, graph.View[float32](x), y, outer, n, inner)
		case graph.Double:
			argTyped(c.Threads, isMax, last, graph.View[float64](x), y, outer, n, inner)
		case graph.Int8:
			argTyped(c.Threads, isMax, last, graph.View[int8](x), y, outer, n, inner)
		case graph.Int16:
			argTyped(c.Threads, isMax, last, graph.View[int16](x), y, outer, n, inner)
		case graph.Int32:
			argTyped(c.Threads, isMax, last, graph.View[int32](x), y, outer, n, inner)
		case graph.Int64:
			argTyped(c.Threads, isMax, last, graph.View[int64](x), y, outer, n, inner)
		case graph.Uint8, graph.Bool:
			argTyped(c.Threads, isMax, last, x.Data, y, outer, n, inner)
		case graph.Uint16:
			argTyped(c.Threads, isMax, last, graph.View[uint16](x), y, outer, n, inner)
		case graph.Uint32:
			argTyped(c.Threads, isMax, last, graph.View[uint32](x), y, outer, n, inner)
		case graph.Uint64:
			argTyped(c.Threads, isMax, last, graph.View[uint64](x), y, outer, n, inner)
		default:
			return c.Unsupported("element type %s", x.DType)
		}
		return nil
	}
	return k
}

// argBeats reports whether v replaces best as the extreme value so far:
// greater (isMax) or smaller, ties going to the later element when last,
// and a NaN beating any number.
func argBeats[T realNumber](v, best T, isMax, last bool) bool {
	if v != v {
		return last || best == best
	}
	if isMax {
		return v > best || last && v == best
	}
	return v < best || last && v == best
}

// argTyped writes ArgMax/ArgMin indices along the middle dimension of x,
// viewed as [outer, n, inner], into y.
func argTyped[T realNumber](threads *Threads, isMax, last bool, x []T, y []int64, outer, n, inner int) {
	if inner == 1 {
		threads.For(outer, max(1, parallelGrain/n), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				row := x[o*n : o*n+n]
				best, bi := row[0], 0
				for i, v := range row {
					if argBeats(v, best, isMax, last) {
						best, bi = v, i
					}
				}
				y[o] = int64(bi)
			}
		})
		return
	}
	parallelBlocks(threads, outer, inner, n, func() func(b, j0, j1 int) {
		best := make([]T, min(inner, 2048))
		return func(b, j0, j1 int) {
			base := b * n * inner
			bv, bi := best[:j1-j0], y[b*inner+j0:b*inner+j1]
			copy(bv, x[base+j0:base+j1])
			for j := range bi {
				bi[j] = 0
			}
			for r := 1; r < n; r++ {
				row := x[base+r*inner+j0 : base+r*inner+j1]
				for j, v := range row {
					if argBeats(v, bv[j], isMax, last) {
						bv[j], bi[j] = v, int64(r)
					}
				}
			}
		}
	})
}

// cumSumKernel is CumSum: running sums along the axis given by the second
// input (a scalar), optionally exclusive (each sum leaves out its own
// element) and in reverse.
func cumSumKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if isHalf(x.DType) {
		return viaFloat32(c, x.DType, cumSumKernel)
	}
	at, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	av, err := at.Int64s()
	if err != nil || len(av) != 1 {
		return c.Errorf("axis must be one integer, not %s%v", at.DType, at.Shape)
	}
	axis, err := resolveAxis(c, av[0], len(x.Shape))
	if err != nil {
		return err
	}
	outer, n, inner := axisGeom(x.Shape, axis)
	cs := cumSum{outer: outer, n: n, inner: inner,
		exclusive: ops.Params[ops.CumSumParams](c.Node, c.Opset).Exclusive != 0, reverse: ops.Params[ops.CumSumParams](c.Node, c.Opset).Reverse != 0}
	y := c.Output(0, x.DType, x.Shape)
	if y.NumElements() == 0 {
		return nil
	}
	switch x.DType {
	case graph.Float:
		cumSumTyped[float32, float64](c.Threads, cs, graph.View[float32](x), graph.View[float32](y))
	case graph.Double:
		cumSumTyped[float64, float64](c.Threads, cs, graph.View[float64](x), graph.View[float64](y))
	case graph.Int8:
		cumSumTyped[int8, int64](c.Threads, cs, graph.View[int8](x), graph.View[int8](y))
	case graph.Int16:
		cumSumTyped[int16, int64](c.Threads, cs, graph.View[int16](x), graph.View[int16](y))
	case graph.Int32:
		cumSumTyped[int32, int64](c.Threads, cs, graph.View[int32](x), graph.View[int32](y))
	case graph.Int64:
		cumSumTyped[int64, int64](c.Threads, cs, graph.View[int64](x), graph.View[int64](y))
	case graph.Uint8:
		cumSumTyped[uint8, uint64](c.Threads, cs, x.Data, y.Data)
	case graph.Uint16:
		cumSumTyped[uint16, uint64](c.Threads, cs, graph.View[uint16](x), graph.View[uint16](y))
	case graph.Uint32:
		cumSumTyped[uint32, uint64](c.Threads, cs, graph.View[uint32](x), graph.View[uint32](y))
	case graph.Uint64:
		cumSumTyped[uint64, uint64](c.Threads, cs, graph.View[uint64](x), graph.View[uint64](y))
	default:
		return c.Unsupported("element type %s", x.DType)
	}
	return nil
}

// cumSum is the geometry and mode of a CumSum.
type cumSum struct {
	outer, n, inner    int
	exclusive, reverse bool
}

// cumSumTyped writes the running sums of x along cs's axis into y,
// accumulating in A.
func cumSumTyped[T realNumber, A accum](threads *Threads, cs cumSum, x, y []T) {
	n, inner := cs.n, cs.inner
	first, step := 0, 1
	if cs.reverse {
		first, step = n-1, -1
	}
	if inner == 1 {
		threads.For(cs.outer, max(1, parallelGrain/n), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				src, dst := x[o*n:o*n+n], y[o*n:o*n+n]
				var a A
				for i, r := 0, first; i < n; i, r = i+1, r+step {
					if cs.exclusive {
						dst[r] = T(a)
						a += A(src[r])
					} else {
						a += A(src[r])
						dst[r] = T(a)
					}
				}
			}
		})
		return
	}
	parallelBlocks(threads, cs.outer, inner, n, func() func(b, j0, j1 int) {
		acc := make([]A, min(inner, 2048))
		return func(b, j0, j1 int) {
			a := acc[:j1-j0]
			for j := range a {
				a[j] = 0
			}
			for i, r := 0, first; i < n; i, r = i+1, r+step {
				off := (b*n+r)*inner + j0
				src, dst := x[off:off+len(a)], y[off:off+len(a)]
				if cs.exclusive {
					for j, v := range src {
						dst[j] = T(a[j])
						a[j] += A(v)
					}
					continue
				}
				for j, v := range src {
					a[j] += A(v)
					dst[j] = T(a[j])
				}
			}
		}
	})
}
