package hostfallback

import "math"

// poolPadded is the vectorised float32 MaxPool without indices over two
// spatial axes with strides of 1: each plane is copied into a buffer of
// the rows and columns its windows reach, the pads (and what a ceil-mode
// window reaches past them) holding NaN, so that every window lies inside
// the buffer and one maxRows call computes the whole plane, over a grid of
// the buffer's wp columns a row whose columns past the output's are
// dropped after, instead of a call for each row's interior and one for
// each of its edge columns (poolFast). A NaN tap only replaces a running
// NaN (maxPlane's rule), so the border's taps change nothing but which NaN
// a window of NaNs alone returns: the result is maxPlane2D's, bit for bit,
// but for NaN payloads. (With larger strides poolFast's row calls are long
// enough that copying the plane costs more than it saves.)
type poolPadded struct {
	top, left int
	// hp and wp are the rows and columns the windows reach, from the
	// first of the top and left pads.
	hp, wp int
	// offs[t] is tap t's offset (row-major over the kernel) from the
	// start of output (0, 0)'s window.
	offs []int
}

// poolPaddedPlan returns the padded plan of a 2-D pooling, or nil where a
// stride is above 1 or a window lies wholly in the padding (its output is
// maxPlane2D's lowest, not NaN).
func poolPaddedPlan(p *poolLayout) *poolPadded {
	if p.stride[0] != 1 || p.stride[1] != 1 {
		return nil
	}
	for d := range 2 {
		for _, n := range p.count[d] {
			if n == 0 {
				return nil
			}
		}
	}
	f := &poolPadded{top: p.padBegin[0], left: p.padBegin[1],
		hp: p.out[0] + (p.kernel[0]-1)*p.dil[0], wp: p.out[1] + (p.kernel[1]-1)*p.dil[1]}
	for i := range p.kernel[0] {
		for j := range p.kernel[1] {
			f.offs = append(f.offs, i*p.dil[0]*f.wp+j*p.dil[1])
		}
	}
	return f
}

// plane sets y to the max pooling of the input plane x.
func (f *poolPadded) plane(p *poolLayout, x, y []float32) {
	H, W, OH, OW := p.in[0], p.in[1], p.out[0], p.out[1]
	padSize := f.hp * f.wp
	buf := gemmBuf(padSize + (OH-1)*f.wp + OW)
	defer gemmBufs.Put(buf)
	pad, grid := (*buf)[:padSize], (*buf)[padSize:]
	nan := float32(math.NaN())
	left := min(f.left, f.wp)
	for r := range f.hp {
		row := pad[r*f.wp : (r+1)*f.wp]
		ir := r - f.top
		if ir < 0 || ir >= H {
			fillF32(row, nan)
			continue
		}
		n := copy(row[left:], x[ir*W:(ir+1)*W])
		fillF32(row[:left], nan)
		fillF32(row[left+n:], nan)
	}
	maxRows(grid, pad, f.offs)
	for oh := range OH {
		copy(y[oh*OW:(oh+1)*OW], grid[oh*f.wp:])
	}
}

// fillF32 sets every element of s to v.
func fillF32(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}
