//go:build !amd64

package hostfallback

// dwRow3 adds w[0]·x[s·i] + w[1]·x[s·i+1] + w[2]·x[s·i+2] to each dst[i],
// s being stride: three taps of a depthwise kernel row; x must hold
// s·(len(dst)−1)+3 values.
func dwRow3(dst, x []float32, stride int, w *[3]float32) {
	dwRow3Go(dst, x, stride, w)
}

// dwRow9 is dwRow3 over three input rows x0, x1 and x2 with the three
// rows of a 3×3 kernel w.
func dwRow9(dst, x0, x1, x2 []float32, stride int, w *[9]float32) {
	dwRow9Go(dst, x0, x1, x2, stride, w)
}
