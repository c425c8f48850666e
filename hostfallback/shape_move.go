package hostfallback

import (
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
)

// cells is a tensor's element storage seen as opaque fixed-size cells: all
// a data-movement kernel needs to know about an element type. Strings have
// size 0 and live in s; every other type lives in b, size bytes per cell.
// Sub-byte types are unpacked to one byte per element by inCells and
// outCells and packed back by storeCells.
type cells struct {
	b    []byte
	s    []string
	size int
}

// inCells returns the elements of t as cells. For sub-byte types it returns
// an unpacked copy; otherwise the cells share t's storage.
func inCells(t *graph.Tensor) cells {
	if t.DType == graph.String {
		return cells{s: t.Strings}
	}
	if bits := t.DType.Bits(); bits < 8 {
		return cells{b: unpackSubByte(t.Data, bits, t.NumElements()), size: 1}
	}
	return cells{b: t.Data, size: t.DType.Size()}
}

// outCells returns cells a kernel writes output t through. For sub-byte
// types they are a scratch buffer that storeCells packs into t.
func outCells(t *graph.Tensor) cells {
	if t.DType != graph.String && t.DType.Bits() < 8 {
		return cells{b: make([]byte, t.NumElements()), size: 1}
	}
	return inCells(t)
}

// storeCells finishes output t written through c, which outCells returned:
// it packs sub-byte elements and does nothing for other types.
func storeCells(t *graph.Tensor, c cells) {
	if bits := t.DType.Bits(); t.DType != graph.String && bits < 8 {
		packSubByte(t.Data, c.b, bits)
	}
}

// unpackSubByte expands n packed elements of the given width (first element
// in the low bits) to one byte each.
func unpackSubByte(data []byte, bits int, n int64) []byte {
	out := make([]byte, n)
	per := int64(8 / bits)
	mask := byte(1)<<bits - 1
	for i := range out {
		out[i] = data[int64(i)/per] >> (uint(int64(i)%per) * uint(bits)) & mask
	}
	return out
}

// packSubByte packs one-byte elements into dst at the given width.
func packSubByte(dst, elems []byte, bits int) {
	clear(dst)
	per := 8 / bits
	mask := byte(1)<<bits - 1
	for i, v := range elems {
		dst[i/per] |= (v & mask) << (uint(i%per) * uint(bits))
	}
}

// copyCells copies n cells from src at si to dst at di.
func copyCells(dst cells, di int64, src cells, si, n int64) {
	if dst.size == 0 {
		copy(dst.s[di:di+n], src.s[si:si+n])
		return
	}
	s := int64(dst.size)
	copy(dst.b[di*s:(di+n)*s], src.b[si*s:(si+n)*s])
}

// fillCells sets the n cells of dst from di on to cell vi of v.
func fillCells(dst cells, di, n int64, v cells, vi int64) {
	if n <= 0 {
		return
	}
	copyCells(dst, di, v, vi, 1)
	for done := int64(1); done < n; {
		k := min(done, n-done)
		copyCells(dst, di+done, dst, di, k)
		done += k
	}
}

// cellsAs views b as cells of type T, a byte array type of the cell size
// (alignment 1, so any b is valid).
func cellsAs[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// outside marks a gatherTables entry whose output cells take the fill value.
// Any sum of offsets that includes it is negative: real offsets stay far
// below 2^56 and a tensor has far fewer than 128 dimensions.
const outside = -1 << 56

// gatherTables writes dst, contiguous in the given shape, as
//
//	dst[i0, ..., ik] = src[tabs[0][i0] + ... + tabs[k][ik]]
//
// or as fill's first cell where some entry is outside. Offsets are in cells.
// Transpose, Slice, Pad, Tile, Expand, Gather and nearest Resize are all
// this one loop with different tables. Trailing dimensions whose tables
// step through src contiguously are moved with copy; the work is spread
// over threads.
func gatherTables(threads *Threads, dst, src cells, shape []int64, tabs [][]int64, fill cells) {
	newTableGather(shape, tabs).gather(threads, dst, src, fill)
}

// newTableGather plans gatherTables over shape and tabs; the plan keeps
// the tables. It is nil, gathering nothing, when shape has no elements.
func newTableGather(shape []int64, tabs [][]int64) *tableGather {
	if graph.NumElements(shape) == 0 {
		return nil
	}
	g := &tableGather{}
	for k, d := range shape {
		if d == 1 {
			g.base0 += tabs[k][0]
		} else {
			g.shape, g.tabs = append(g.shape, d), append(g.tabs, tabs[k])
		}
	}
	g.plan()
	return g
}

// gather runs the plan (see gatherTables); a nil plan does nothing.
func (g *tableGather) gather(threads *Threads, dst, src, fill cells) {
	if g == nil {
		return
	}
	switch dst.size {
	case 0:
		runTableGather(threads, g, dst.s, src.s, fill.s)
	case 1:
		runTableGather(threads, g, dst.b, src.b, fill.b)
	case 2:
		runTableGather(threads, g, cellsAs[[2]byte](dst.b), cellsAs[[2]byte](src.b), cellsAs[[2]byte](fill.b))
	case 4:
		runTableGather(threads, g, cellsAs[[4]byte](dst.b), cellsAs[[4]byte](src.b), cellsAs[[4]byte](fill.b))
	case 8:
		runTableGather(threads, g, cellsAs[[8]byte](dst.b), cellsAs[[8]byte](src.b), cellsAs[[8]byte](fill.b))
	default:
		runTableGather(threads, g, cellsAs[[16]byte](dst.b), cellsAs[[16]byte](src.b), cellsAs[[16]byte](fill.b))
	}
}

// tableGather is gatherTables' plan: outer dimensions walked by an odometer,
// and rows of rowLen cells that are either one contiguous source run
// (contiguous) or the last dimension's table.
type tableGather struct {
	shape      []int64
	tabs       [][]int64
	outer      int
	rowLen     int64
	base0      int64
	contiguous bool
	lastFill   bool
}

// plan chooses rows: the longest contiguous trailing block, else the last
// dimension. Dimensions of size 1 have been folded into base0 already.
func (g *tableGather) plan() {
	r := len(g.shape)
	run, k, merged := int64(1), r, int64(0)
	for k > 0 && affineTable(g.tabs[k-1], run) {
		run *= g.shape[k-1]
		merged += g.tabs[k-1][0]
		k--
	}
	if k < r || r == 0 {
		g.outer, g.rowLen, g.contiguous = k, run, true
		g.base0 += merged
		return
	}
	g.outer, g.rowLen = r-1, g.shape[r-1]
	for _, t := range g.tabs[r-1] {
		if t < 0 {
			g.lastFill = true
		}
	}
}

// affineTable reports whether t[i] = t[0] + i*step with t[0] >= 0.
func affineTable(t []int64, step int64) bool {
	if len(t) == 0 || t[0] < 0 {
		return false
	}
	for i, v := range t {
		if v != t[0]+int64(i)*step {
			return false
		}
	}
	return true
}

func runTableGather[T any](threads *Threads, g *tableGather, dst, src, fill []T) {
	var fv T
	if len(fill) > 0 {
		fv = fill[0]
	}
	rows := int(graph.NumElements(g.shape[:g.outer]))
	grain := int(max(1, 16384/max(g.rowLen, 1)))
	threads.For(rows, grain, func(lo, hi int) {
		var small [8]int64
		idx := small[:0]
		if g.outer > len(small) {
			idx = make([]int64, g.outer)
		}
		idx = idx[:g.outer]
		rem := int64(lo)
		for d := g.outer - 1; d >= 0; d-- {
			idx[d] = rem % g.shape[d]
			rem /= g.shape[d]
		}
		base := g.base0
		for d := range idx {
			base += g.tabs[d][idx[d]]
		}
		var last []int64
		if !g.contiguous {
			last = g.tabs[g.outer]
		}
		o := int64(lo) * g.rowLen
		for row := lo; row < hi; row++ {
			out := dst[o : o+g.rowLen]
			switch {
			case base < 0:
				for j := range out {
					out[j] = fv
				}
			case g.contiguous:
				copy(out, src[base:base+g.rowLen])
			case g.lastFill:
				for j, t := range last {
					if t < 0 {
						out[j] = fv
					} else {
						out[j] = src[base+t]
					}
				}
			default:
				s := src[base:]
				for j, t := range last {
					out[j] = s[t]
				}
			}
			o += g.rowLen
			for d := g.outer - 1; d >= 0; d-- {
				base -= g.tabs[d][idx[d]]
				idx[d]++
				if idx[d] < g.shape[d] {
					base += g.tabs[d][idx[d]]
					break
				}
				idx[d] = 0
				base += g.tabs[d][0]
			}
		}
	})
}

// rangeTable returns the table [start, start+step, ...] of length n.
func rangeTable(n, start, step int64) []int64 {
	t := make([]int64, n)
	for i := range t {
		t[i] = start + int64(i)*step
	}
	return t
}
