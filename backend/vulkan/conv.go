package vulkan

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// maxSpatial is the most spatial axes conv.comp and pool.comp sweep.
const maxSpatial = 3

// convActs maps FusedConv's activation attribute (an ONNX op's name, or
// ops.ActSwish) to the activation codes of conv.comp and convgemm.comp,
// act.glsl's ACT_NAME constants; "" (none) is 0, ACT_NONE.
var convActs = shaderOps("act.glsl", "ACT_", append(ops.Names(graph.DefaultDomain), ops.ActSwish))

func init() {
	register("Conv", lowerConv)
	register("ConvTranspose", lowerConvTranspose)
	registerFused("FusedConv", lowerConv)
}

// window is the geometry of a convolution or pooling window sweep over
// one to maxSpatial spatial axes, right-aligned in maxSpatial slots: the
// leading unused slots have size, kernel, stride and dilation 1 and no
// padding, so one shader loop covers 1-D, 2-D and 3-D.
type window struct {
	in, out, kernel, stride, dil, padBegin, padEnd [maxSpatial]int64
}

// newWindow reads the window attributes of n (kernel_shape, defaulting to
// kernel; strides, dilations, pads and auto_pad) for the spatial input
// sizes in and sizes the output as the CPU kernels do; ceil is pooling's
// ceil_mode, which keeps the last window starting inside the input or the
// begin padding. ok is false for attributes that do not fit.
func newWindow(p *ops.Window, in, kernel []int64, ceil bool) (w *window, ok bool) {
	r := len(in)
	if r < 1 || r > maxSpatial {
		return nil, false
	}
	ks, st, dil, pads := p.KernelFor(kernel), p.StridesFor(r), p.DilationsFor(r), p.PadsFor(r)
	if len(ks) != r || len(st) != r || len(dil) != r || len(pads) != 2*r {
		return nil, false
	}
	w = &window{}
	autoPad := p.AutoPad
	for d := range maxSpatial {
		w.in[d], w.out[d], w.kernel[d], w.stride[d], w.dil[d] = 1, 1, 1, 1, 1
	}
	for i := range r {
		d := maxSpatial - r + i
		if ks[i] < 1 || st[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[r+i] < 0 {
			return nil, false
		}
		w.in[d], w.kernel[d], w.stride[d], w.dil[d], w.padBegin[d], w.padEnd[d] = in[i], ks[i], st[i], dil[i], pads[i], pads[r+i]
		s, span := st[i], (ks[i]-1)*dil[i]+1
		switch autoPad {
		case "NOTSET", "":
		case "VALID":
			w.padBegin[d], w.padEnd[d] = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			total := max(0, ((in[i]+s-1)/s-1)*s+span-in[i])
			small := total / 2
			w.padBegin[d], w.padEnd[d] = small, total-small
			if autoPad == "SAME_LOWER" {
				w.padBegin[d], w.padEnd[d] = total-small, small
			}
		default:
			return nil, false
		}
		room := in[i] + w.padBegin[d] + w.padEnd[d] - span
		if room < 0 {
			return nil, false
		}
		w.out[d] = room/s + 1
		if ceil && room%s != 0 {
			w.out[d]++
			if (w.out[d]-1)*s >= in[i]+w.padBegin[d] {
				w.out[d]--
			}
		}
	}
	return w, true
}

// outShape is lead followed by the output sizes of the last rank axes.
func (w *window) outShape(lead []int64, rank int) []int64 {
	return append(slices.Clone(lead), w.out[maxSpatial-rank:]...)
}

// words returns the window's push constants: input and output sizes,
// kernel, strides, dilations and begin padding, each maxSpatial words.
func (w *window) words() []uint32 {
	var v []uint32
	for _, a := range [][maxSpatial]int64{w.in, w.out, w.kernel, w.stride, w.dil, w.padBegin} {
		for _, x := range a {
			v = append(v, uint32(x))
		}
	}
	return v
}

// lowerConv lowers Conv and FusedConv on float32 X [N, C, D...] and W
// [M, C/group, k...] with one to three spatial axes and an optional bias
// B [M], W and B constant or not. FusedConv adds its optional Sum (input
// 3) and applies its activation in the store. A depthwise convolution
// (one input channel per group) over one or two axes runs dwconv.comp
// where its tile fits shared memory, other convolutions on GPUs
// convgemm.comp when their groups have at least convGemmMinRows output
// channels, the rest conv.comp (see Schedule.Conv).
func lowerConv(q *query) (*launch, bool) {
	n, shapes := q.n, q.shapes
	maxIn := 3
	if n.Domain == ops.FusedDomain {
		maxIn = 4
	}
	if len(shapes) < 2 || len(shapes) > maxIn || shapes[1] == nil {
		return nil, false
	}
	var act int32
	var alpha, beta float32
	if n.Domain == ops.FusedDomain {
		name, a, b, err := ops.FusedActivation(n, q.opset)
		code, ok := convActs[name]
		if err != nil || !ok && name != "" {
			return nil, false
		}
		act, alpha, beta = code, a, b
	}
	x, wt := shapes[0], shapes[1]
	r := len(x) - 2
	w, group, ok := convWindow(q)
	if !ok {
		return nil, false
	}
	c, m := x[1], wt[0]
	bindings := []slot{{false, 0}, {false, 1}, {false, 1}, {true, 0}, {false, 0}}
	var flags uint32
	if len(shapes) >= 3 && shapes[2] != nil {
		if len(shapes[2]) != 1 || shapes[2][0] != m {
			return nil, false
		}
		bindings[2], flags = slot{false, 2}, 1
	}
	out := w.outShape([]int64{x[0], m}, r)
	if len(shapes) == 4 && shapes[3] != nil {
		if !slices.Equal(shapes[3], out) {
			return nil, false
		}
		bindings[4], flags = slot{false, 3}, flags|2
	}
	// The activation is a push constant (see shaders/epilogue.glsl): one
	// pipeline serves every activation.
	flags |= uint32(act) << 8
	size := graph.NumElements(out[2:])
	cols := x[0] * size
	mg := m / group
	if q.depthwiseConv && c == group && r <= 2 {
		if l, ok := dwConv(q.caps, w, out, mg, alpha, beta, bindings, flags); ok {
			return l, true
		}
	}
	if q.tiledConv && mg >= convGemmMinRows {
		return convGemm(q.caps, w, x, wt, out, group, false, alpha, beta, bindings, flags)
	}
	mb := int64(1)
	switch {
	case mg >= 8:
		mb = 8
	case mg >= 4:
		mb = 4
	}
	pw := convTile(mg, cols, mb)
	rows, width := (workgroupSize/pw)*mb, 4*pw
	vals := []uint32{uint32(m), uint32(c), uint32(mg), uint32(c / group), uint32(group), uint32(size), uint32(cols), uint32(pw)}
	vals = append(vals, w.words()...)
	vals = append(vals, flags, math.Float32bits(alpha), math.Float32bits(beta))
	return &launch{shader: "conv", op: int32(mb) << 8, bindings: bindings, push: words(vals...),
		elems: graph.NumElements(out), outShapes: [][]int64{out},
		groups: group * ((mg + rows - 1) / rows) * ((cols + width - 1) / width)}, true
}

// convWindow returns the window and group count of a convolution of X [N,
// C, D...] (input 0) by W [M, C/group, k...] (input 1) over one to three
// spatial axes; ok is false for shapes or attributes that do not fit.
func convWindow(q *query) (w *window, group int64, ok bool) {
	x, wt := q.shapes[0], q.shapes[1]
	r := len(x) - 2
	if r < 1 || len(wt) != len(x) || graph.NumElements(x) == 0 || graph.NumElements(wt) == 0 {
		return nil, 0, false
	}
	win, group := ops.WindowOf(q.n, q.opset), ops.ConvGroupOf(q.n, q.opset).Group
	c, m := x[1], wt[0]
	if group < 1 || c%group != 0 || m%group != 0 || wt[1]*group != c {
		return nil, 0, false
	}
	if ks := win.KernelShape; ks != nil && !slices.Equal(ks, wt[2:]) {
		return nil, 0, false
	}
	w, ok = newWindow(win, x[2:], wt[2:], false)
	return w, group, ok
}

// The schedule of convgemm.comp: tiles of convTileM output channels by
// convTileN positions, stepping convKSlice deep through K; convWanted is
// the workgroups a dispatch should have to fill a GPU (about two per
// compute unit of a large one: an H200 has 132), convMinSteps the fewest
// K steps a split gets.
const (
	convTileM    = 64
	convTileN    = 64
	convKSlice   = 16
	convWanted   = 256
	convMinSteps = 4
)

// convGemmMinRows is the fewest output channels per group convgemm.comp
// takes; narrower groups (depthwise ones) would leave most of its 64-row
// tiles empty, and conv.comp takes them.
const convGemmMinRows = 16

// convSchedule returns the K splits for a GEMM of tiles output tiles and
// depth K, and the K steps of each split: one split when the tiles fill
// the device (or c.convSplits when set), else enough splits to make about
// convWanted workgroups, each split at least convMinSteps steps; the
// partial sums (splits times elems floats) must fit a binding.
func convSchedule(c caps, tiles, depth, elems int64) (splits, per int64) {
	return kSplits(c.convSplits, c.maxElems, tiles, depth, elems)
}

// kSplits returns the K splits of a GEMM of 64x64 tiles stepping
// convKSlice deep (convgemm.comp's, and matmul.comp's tiled schedule),
// tiles output tiles, depth K and elems outputs, and the K steps of each
// split: forced splits where positive, else one when the tiles fill the
// device and enough to make about convWanted workgroups otherwise, each
// split at least convMinSteps steps; the partial sums (splits times elems
// floats) must fit a binding of maxElems.
func kSplits(forced int, maxElems, tiles, depth, elems int64) (splits, per int64) {
	steps := (depth + convKSlice - 1) / convKSlice
	splits = 1
	switch {
	case forced > 0:
		splits = int64(forced)
	case tiles < convWanted:
		splits = min((convWanted+tiles-1)/tiles, steps/convMinSteps)
	}
	splits = max(1, min(splits, steps, maxElems/elems))
	per = (steps + splits - 1) / splits
	return (steps + per - 1) / per, per
}

// convGemm returns the dispatches of convgemm.comp for a convolution
// that lowerConv or lowerConvTranspose (transposed) has checked, of
// output out, W wt: its GEMM, alone with the epilogue in its store, or
// with split-K writing partial sums to the scratch and a reducing
// dispatch that adds them and applies the epilogue.
func convGemm(c caps, w *window, x, wt, out []int64, group int64, transposed bool, alpha, beta float32, bindings []slot, flags uint32) (*launch, bool) {
	m, ch := out[1], x[1]
	mg, cg := m/group, ch/group
	size := graph.NumElements(out[2:])
	cols := x[0] * size
	elems := graph.NumElements(out)
	taps := graph.NumElements(wt[2:])
	// A ConvTranspose is a GEMM per phase (the outputs whose offsets
	// modulo the strides are one), over each image's grid of its outputs
	// and the taps that reach them, at most transposedTaps along each axis.
	phases, gcols, depth := int64(1), cols, cg*taps
	if transposed {
		gcols, depth = x[0], cg
		for d := range maxSpatial {
			st := w.stride[d]
			phases, gcols, depth = phases*st, gcols*((w.out[d]+st-1)/st), depth*transposedTaps(w, d)
		}
	}
	tiles := phases * group * ((mg + convTileM - 1) / convTileM) * ((gcols + convTileN - 1) / convTileN)
	splits, per := convSchedule(c, tiles, depth, elems)
	vals := []uint32{uint32(m), uint32(ch), uint32(mg), uint32(cg), uint32(group), uint32(size), uint32(cols), uint32(splits)}
	vals = append(vals, w.words()...)
	vals = append(vals, flags, math.Float32bits(alpha), math.Float32bits(beta), uint32(per))
	var op int32
	switch {
	case transposed:
		op = convGemmTransposed
	case taps == 1:
		op = convGemmPoint
	}
	// The shader's part, which only split-K uses, binds y, and the split
	// GEMM's unused bias, y and sum bind the scratch it writes: a writable
	// binding never binds an input (see matmulGeom.launch).
	bindings = append(slices.Clone(bindings), slot{true, 0})
	l := &launch{shader: "convgemm", op: op, bindings: bindings, push: words(vals...), elems: elems,
		outShapes: [][]int64{out}, groups: tiles * splits}
	if splits == 1 {
		return l, true
	}
	// The GEMM writes the scratch alone; the reduction reads it, the
	// bias and the Sum, and writes y. Neither binds what it does not
	// read (the reduction no W, so that the GEMM may read W as fp16).
	l.op |= convGemmSplit
	l.bindings = []slot{bindings[0], bindings[1], {false, scratchSlot}, {true, scratchSlot}, {false, scratchSlot}, {true, scratchSlot}}
	l.scratch = uint64(4 * splits * elems)
	bias := bindings[2]
	if flags&1 == 0 {
		bias = slot{false, 0}
	}
	l.then = []*launch{{shader: "convgemm", op: convGemmReduce, push: l.push, elems: elems,
		bindings: []slot{{false, 0}, {false, 0}, bias, bindings[3], bindings[4], {false, scratchSlot}}}}
	return l, true
}

// convgemm.comp's OP bits.
const (
	convGemmSplit      = 1 << 8
	convGemmReduce     = 1 << 9
	convGemmPoint      = 1 << 10
	convGemmTransposed = 1 << 11
)

// transposedTaps returns the most taps of a transposed convolution's axis
// d (window w: input and output sizes, kernel, stride, dilation) that
// reach one output: those st/gcd(st, dil) apart (taps.glsl's tapStep).
func transposedTaps(w *window, d int) int64 {
	a, b := w.stride[d], w.dil[d]
	for b != 0 {
		a, b = b, a%b
	}
	step := w.stride[d] / a
	return (w.kernel[d] + step - 1) / step
}

// convTile returns conv.comp's pw for a group of mg output channels over
// cols positions with mb channels per invocation: the tile of
// (workgroupSize/pw)·mb channels by 4·pw positions that wastes the least
// on partial tiles, the widest on a tie (wide tiles read the input in
// longer runs).
func convTile(mg, cols, mb int64) int64 {
	best, bestUse := int64(0), -1.0
	for _, pw := range []int64{256, 64, 16, 4} {
		rows, width := (workgroupSize/pw)*mb, 4*pw
		use := float64(mg) / float64((mg+rows-1)/rows*rows) * float64(cols) / float64((cols+width-1)/width*width)
		if use > bestUse {
			best, bestUse = pw, use
		}
	}
	return best
}

// dwShared is the floats of dwconv.comp's shared array (its SHARED: 16
// KiB, which every Vulkan device has), dwOuts the most outputs one of its
// invocations computes (its OUTS, the fewest that cover the tile, is in
// bits 8-10 of OP), dwMaxWidth the most columns of its tile.
const (
	dwShared   = 4096
	dwOuts     = 4
	dwMaxWidth = 64
)

// dwConv returns the dispatch of dwconv.comp for a depthwise convolution
// (mg output channels per input channel) of output shape out over the
// window w's last two axes, which lowerConv has checked; ok is false
// when the device's shared memory is smaller than dwconv.comp's or one
// output's taps and input patch do not fit it.
func dwConv(c caps, w *window, out []int64, mg int64, alpha, beta float32, bindings []slot, flags uint32) (*launch, bool) {
	th, tw, ok := dwTile(w)
	if !ok || c.sharedMem < 4*dwShared {
		return nil, false
	}
	ty, tx := (w.out[1]+th-1)/th, (w.out[2]+tw-1)/tw
	images, m := out[0], out[1]
	vals := []uint32{uint32(m), uint32(mg), uint32(images), uint32(th), uint32(tw), uint32(ty), uint32(tx)}
	vals = append(vals, w.words()...)
	vals = append(vals, flags, math.Float32bits(alpha), math.Float32bits(beta))
	return &launch{shader: "dwconv", op: int32((th*tw+workgroupSize-1)/workgroupSize) << 8, bindings: bindings, push: words(vals...),
		elems: graph.NumElements(out), outShapes: [][]int64{out}, groups: images * m * ty * tx}, true
}

// dwTile returns dwconv.comp's tile for the output of window w's last two
// axes, th rows by tw columns: at most dwMaxWidth columns and
// dwOuts·workgroupSize outputs, the output split into tiles of even
// sizes, then halved (rows first) until the kernel's taps and the input
// patch the tile reads fit dwShared floats; ok is false when one output's
// do not.
func dwTile(w *window) (th, tw int64, ok bool) {
	even := func(n, most int64) int64 {
		parts := (n + most - 1) / most
		return (n + parts - 1) / parts
	}
	tw = even(w.out[2], dwMaxWidth)
	th = even(w.out[1], dwOuts*workgroupSize/tw)
	span := func(t int64, d int) int64 { return (t-1)*w.stride[d] + (w.kernel[d]-1)*w.dil[d] + 1 }
	for w.kernel[1]*w.kernel[2]+span(th, 1)*span(tw, 2) > dwShared {
		switch {
		case th > 1:
			th = (th + 1) / 2
		case tw > 1:
			tw = (tw + 1) / 2
		default:
			return 0, 0, false
		}
	}
	return th, tw, true
}

// convTransposed is conv.comp's TRANSPOSED bit of OP, with MB 1.
const convTransposed = 1<<12 | 1<<8

// lowerConvTranspose lowers ConvTranspose on float32 X [N, C, D...] and W
// [C, M/group, k...] with one to three spatial axes: groups, strides,
// dilations, pads, output_padding, output_shape, auto_pad and an optional
// bias B [M], sizing the output as the CPU kernel does. On GPUs groups of
// at least convGemmMinRows output channels run on convgemm.comp, a GEMM
// per phase of the strides (see convGemm); elsewhere conv.comp gathers.
func lowerConvTranspose(q *query) (*launch, bool) {
	n, shapes := q.n, q.shapes
	if len(shapes) < 2 || len(shapes) > 3 || shapes[1] == nil {
		return nil, false
	}
	x, wt := shapes[0], shapes[1]
	r := len(x) - 2
	if r < 1 || r > maxSpatial || len(wt) != len(x) || graph.NumElements(x) == 0 || graph.NumElements(wt) == 0 {
		return nil, false
	}
	p := ops.Params[ops.ConvTransposeParams](n, q.opset)
	group := p.Group
	c, mg := x[1], wt[1]
	if group < 1 || c%group != 0 || wt[0] != c {
		return nil, false
	}
	m := mg * group
	if ks := p.KernelShape; ks != nil && !slices.Equal(ks, wt[2:]) {
		return nil, false
	}
	outPad := p.OutputPaddingFor(r)
	shape := p.OutputShape
	if len(shape) == r+2 {
		shape = shape[2:]
	}
	st, dil, pads := p.StridesFor(r), p.DilationsFor(r), p.PadsFor(r)
	if len(outPad) != r || shape != nil && len(shape) != r || len(st) != r || len(dil) != r || len(pads) != 2*r {
		return nil, false
	}
	autoPad := p.AutoPad
	w := &window{}
	for d := range maxSpatial {
		w.in[d], w.out[d], w.kernel[d], w.stride[d], w.dil[d] = 1, 1, 1, 1, 1
	}
	for i := range r {
		d := maxSpatial - r + i
		if st[i] < 1 || dil[i] < 1 || outPad[i] < 0 {
			return nil, false
		}
		w.in[d], w.kernel[d], w.stride[d], w.dil[d] = x[2+i], wt[2+i], st[i], dil[i]
		begin, end := pads[i], pads[r+i]
		full := st[i]*(x[2+i]-1) + outPad[i] + (wt[2+i]-1)*dil[i] + 1
		switch {
		case autoPad != "NOTSET" && autoPad != "" && autoPad != "VALID" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER":
			return nil, false
		case shape != nil || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			out := x[2+i] * st[i]
			if shape != nil {
				out = shape[i]
			}
			total := full - out
			half := total / 2
			if total < 0 && total%2 != 0 {
				half--
			}
			begin, end = total-half, half
			if autoPad == "SAME_UPPER" {
				begin, end = half, total-half
			}
		case autoPad == "VALID":
			begin, end = 0, 0
		}
		w.padBegin[d], w.out[d] = begin, full-begin-end
		if w.out[d] <= 0 {
			return nil, false
		}
	}
	bindings := []slot{{false, 0}, {false, 1}, {false, 1}, {true, 0}, {false, 0}}
	var flags uint32
	if len(shapes) >= 3 && shapes[2] != nil {
		if len(shapes[2]) != 1 || shapes[2][0] != m {
			return nil, false
		}
		bindings[2], flags = slot{false, 2}, 1
	}
	out := w.outShape([]int64{x[0], m}, r)
	if len(shapes) == 4 && shapes[3] != nil {
		if !slices.Equal(shapes[3], out) {
			return nil, false
		}
		bindings[4], flags = slot{false, 3}, flags|2
	}
	if q.tiledConv && mg >= convGemmMinRows {
		return convGemm(q.caps, w, x, wt, out, group, true, 0, 0, bindings, flags)
	}
	size := graph.NumElements(out[2:])
	vals := []uint32{uint32(m), uint32(c), uint32(mg), uint32(c / group), uint32(group), uint32(size), uint32(x[0] * size), 0}
	vals = append(vals, w.words()...)
	vals = append(vals, flags, 0, 0)
	return &launch{shader: "conv", op: convTransposed, bindings: bindings, push: words(vals...),
		elems: graph.NumElements(out), outShapes: [][]int64{out}}, true
}
