package hostfallback

// dwRow3S1 is dwRow3 with stride 1 for n a positive multiple of 8; it reads
// x[:n+2].
//
//go:noescape
func dwRow3S1(dst, x *float32, n int, w *[3]float32)

// dwRow3S2 is dwRow3 with stride 2 for n a positive multiple of 8; it reads
// x[:2n+2].
//
//go:noescape
func dwRow3S2(dst, x *float32, n int, w *[3]float32)

// dwRow9S1 is dwRow9 with stride 1 for n a positive multiple of 8; it
// reads x0, x1 and x2 [:n+2].
//
//go:noescape
func dwRow9S1(dst, x0, x1, x2 *float32, n int, w *[9]float32)

// dwRow9S2 is dwRow9 with stride 2 for n a positive multiple of 8; it
// reads x0, x1 and x2 [:2n+2].
//
//go:noescape
func dwRow9S2(dst, x0, x1, x2 *float32, n int, w *[9]float32)

// dwRow9 is dwRow3 over three input rows x0, x1 and x2 with the three
// rows of a 3×3 kernel w.
func dwRow9(dst, x0, x1, x2 []float32, stride int, w *[9]float32) {
	n := 0
	if hasAVX2 {
		short := min(len(x0), len(x1), len(x2))
		switch stride {
		case 1:
			n = min(len(dst), short-2) &^ 7
			if n > 0 {
				dwRow9S1(&dst[0], &x0[0], &x1[0], &x2[0], n, w)
			}
		case 2:
			n = min(len(dst), (short-2)/2) &^ 7
			if n > 0 {
				dwRow9S2(&dst[0], &x0[0], &x1[0], &x2[0], n, w)
			}
		}
	}
	dwRow9Go(dst[n:], x0[n*stride:], x1[n*stride:], x2[n*stride:], stride, w)
}

// dwRow3 adds w[0]·x[s·i] + w[1]·x[s·i+1] + w[2]·x[s·i+2] to each dst[i],
// s being stride: three taps of a depthwise kernel row; x must hold
// s·(len(dst)−1)+3 values.
func dwRow3(dst, x []float32, stride int, w *[3]float32) {
	n := 0
	if hasAVX2 {
		switch stride {
		case 1:
			n = min(len(dst), len(x)-2) &^ 7
			if n > 0 {
				dwRow3S1(&dst[0], &x[0], n, w)
			}
		case 2:
			n = min(len(dst), (len(x)-2)/2) &^ 7
			if n > 0 {
				dwRow3S2(&dst[0], &x[0], n, w)
			}
		}
	}
	dwRow3Go(dst[n:], x[n*stride:], stride, w)
}
