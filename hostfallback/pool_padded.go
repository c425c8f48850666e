package hostfallback

import "math"

// poolPadded is the vectorised float32 MaxPool without indices over two
// spatial axes: each plane is copied into a buffer of the rows and
// columns its windows reach, split by the column stride sw into phases
// (row r of the buffer is sw phase rows of wq values, phase q holding the
// reached columns q, q+sw, …), the pads (and what a ceil-mode window
// reaches past them) holding NaN, so that every window lies inside the
// buffer and each of its taps reads one phase row at a fixed offset: one
// maxRowsPitch call computes the whole plane, straight into the output,
// instead of a call for each row's interior and one for each of its edge
// columns (poolFast). The buffer's NaN cells are written once for a run of
// planes, which then overwrite only the cells of input values. A NaN tap
// only replaces a running NaN (maxPlane's rule), so the border's taps
// change nothing but which NaN a window of NaNs alone returns: the result
// is maxPlane2D's, bit for bit, but for NaN payloads.
type poolPadded struct {
	top, left int
	// hp is the rows the windows reach, from the first of the top pads;
	// wq the values of a phase row (the reached columns, from the first
	// of the left pads, split sw ways) and sw the column stride.
	hp, wq, sw int
	// rows and cols are the input rows and columns the windows reach.
	rows, cols int
	// offs[t] is tap t's offset (row-major over the kernel) from the
	// start of output (0, 0)'s window in the buffer; pitch is that of an
	// output row.
	offs  []int
	pitch int
}

// poolPaddedPlan returns the padded plan of a 2-D pooling, or nil where a
// window lies wholly in the padding (its output is maxPlane2D's lowest,
// not NaN).
func poolPaddedPlan(p *poolLayout) *poolPadded {
	for d := range 2 {
		for _, n := range p.count[d] {
			if n == 0 {
				return nil
			}
		}
	}
	sh, sw := p.stride[0], p.stride[1]
	hp := (p.out[0]-1)*sh + (p.kernel[0]-1)*p.dil[0] + 1
	wp := (p.out[1]-1)*sw + (p.kernel[1]-1)*p.dil[1] + 1
	f := &poolPadded{top: p.padBegin[0], left: p.padBegin[1], hp: hp, wq: (wp + sw - 1) / sw, sw: sw}
	f.rows = max(0, min(p.in[0], hp-f.top))
	f.cols = max(0, min(p.in[1], wp-f.left))
	row := sw * f.wq
	f.pitch = sh * row
	for i := range p.kernel[0] {
		for j := range p.kernel[1] {
			c := j * p.dil[1]
			f.offs = append(f.offs, i*p.dil[0]*row+c%sw*f.wq+c/sw)
		}
	}
	return f
}

// size is the length of the buffer.
func (f *poolPadded) size() int { return f.hp * f.sw * f.wq }

// fillNaN sets every cell of the buffer to NaN.
func (f *poolPadded) fillNaN(buf []float32) {
	nan := float32(math.NaN())
	for i := range buf {
		buf[i] = nan
	}
}

// plane sets y to the max pooling of the input plane x, through buf (of
// f.size(), its pads NaN: see fillNaN).
func (f *poolPadded) plane(p *poolLayout, x, y, buf []float32) {
	W, OH, OW := p.in[1], p.out[0], p.out[1]
	row := f.sw * f.wq
	if f.rows > 0 && f.cols > 0 {
		at := f.top * row
		switch {
		case f.sw == 1:
			for r := range f.rows {
				copy(buf[at+r*row+f.left:][:f.cols], x[r*W:])
			}
		case f.sw == 2 && f.cols > 1:
			// Input column c is buffer column c+left: the even input
			// columns go to phase left mod 2, the odd ones to the other.
			e, o := at+f.left%2*f.wq+f.left/2, at+(f.left+1)%2*f.wq+(f.left+1)/2
			ne, no := (f.cols+1)/2, f.cols/2
			if !dwSplitRows(buf[e:], buf[o:], x, f.rows, ne, no, W, row) {
				for r := range f.rows {
					for k := range ne {
						buf[e+r*row+k] = x[r*W+2*k]
					}
					for k := range no {
						buf[o+r*row+k] = x[r*W+2*k+1]
					}
				}
			}
		default:
			for r := range f.rows {
				for c, v := range x[r*W : r*W+f.cols] {
					b := c + f.left
					buf[at+r*row+b%f.sw*f.wq+b/f.sw] = v
				}
			}
		}
	}
	maxRowsPitch(y, buf, f.offs, OW, OH, OW, f.pitch)
}
