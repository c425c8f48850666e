package hostfallback

import (
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Signal processing: DFT, STFT, the Hann, Hamming and Blackman windows and
// MelWeightMatrix. Transforms run in complex128: a radix-2 FFT for power
// of two lengths, a direct sum with a twiddle table otherwise.

func init() {
	Register("DFT", dftKernel)
	Register("STFT", stftKernel)
	Register("HannWindow", windowKernel(0.5, 0.5, 0))
	Register("HammingWindow", windowKernel(25.0/46, 21.0/46, 0))
	Register("BlackmanWindow", windowKernel(0.42, 0.5, 0.08))
	Register("MelWeightMatrix", melWeightMatrixKernel)
}

// dftPlan transforms sequences of one length.
type dftPlan struct {
	n       int
	inverse bool
	tw      []complex128 // exp(∓2πi·k/n) for k < n
	buf     []complex128
}

func newDFTPlan(n int, inverse bool) *dftPlan {
	p := &dftPlan{n: n, inverse: inverse, tw: make([]complex128, n), buf: make([]complex128, n)}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for k := range p.tw {
		p.tw[k] = cmplx.Rect(1, sign*2*math.Pi*float64(k)/float64(n))
	}
	return p
}

// transform replaces x (length n) by its DFT, scaled by 1/n when inverse.
func (p *dftPlan) transform(x []complex128) {
	n := p.n
	if n == 0 {
		return
	}
	if n&(n-1) == 0 {
		p.fft(x)
	} else {
		for k := range n {
			var s complex128
			for j, v := range x {
				s += v * p.tw[(j*k)%n]
			}
			p.buf[k] = s
		}
		copy(x, p.buf)
	}
	if p.inverse {
		f := complex(1/float64(n), 0)
		for i := range x {
			x[i] *= f
		}
	}
}

// fft is the iterative radix-2 Cooley–Tukey transform, in place.
func (p *dftPlan) fft(x []complex128) {
	n := p.n
	shift := 64 - bits.Len(uint(n-1))
	if n > 1 {
		for i := range n {
			j := int(bits.Reverse64(uint64(i)) >> shift)
			if i < j {
				x[i], x[j] = x[j], x[i]
			}
		}
	}
	for size := 2; size <= n; size <<= 1 {
		step := n / size
		for start := 0; start < n; start += size {
			for k := range size / 2 {
				w := p.tw[k*step]
				a, b := x[start+k], x[start+k+size/2]*w
				x[start+k], x[start+k+size/2] = a+b, a-b
			}
		}
	}
}

// dftKernel is DFT: the transform of input [batch, dims..., 1 or 2] (real
// or complex) along one signal axis, zero-padded or truncated to
// dft_length, giving [..., 2]; onesided keeps the first n/2+1 bins. The
// axis is an attribute (default 1) before opset 20 and the optional input
// 2 (default -2) after.
func dftKernel(c *Call) error {
	x, v, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	r := x.Rank()
	if r < 2 || (x.Shape[r-1] != 1 && x.Shape[r-1] != 2) {
		return c.Errorf("input shape %v, want [..., 1] or [..., 2]", x.Shape)
	}
	axis := ops.AxisParamOf(c.Node, c.Opset).Axis
	if c.Opset >= 20 {
		axis = -2
		if a, ok, err := intsInput(c, 2); err != nil {
			return err
		} else if ok && len(a) == 1 {
			axis = a[0]
		}
	}
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis >= int64(r-1) {
		return c.Errorf("axis %d out of range for input %v", axis, x.Shape)
	}
	length := x.Shape[axis]
	if l, ok, err := intsInput(c, 1); err != nil {
		return err
	} else if ok {
		if len(l) != 1 || l[0] < 1 {
			return c.Errorf("dft_length %v", l)
		}
		length = l[0]
	}
	if length < 1 {
		return c.Errorf("transform of length %d", length)
	}
	dp := ops.Params[ops.DFTParams](c.Node, c.Opset)
	inverse, onesided := dp.Inverse != 0, dp.Onesided != 0
	if inverse && onesided {
		return c.Unsupported("onesided inverse transform")
	}
	bins := length
	if onesided {
		bins = length/2 + 1
	}
	shape := append([]int64{}, x.Shape...)
	shape[axis], shape[r-1] = bins, 2
	outer := int(graph.NumElements(x.Shape[:axis]))
	inner := int(graph.NumElements(x.Shape[axis+1 : r-1]))
	comps, n, L := int(x.Shape[r-1]), int(x.Shape[axis]), int(length)
	out := make([]float64, graph.NumElements(shape))
	p := newDFTPlan(L, inverse)
	line := make([]complex128, L)
	for o := range outer {
		for i := range inner {
			clear(line)
			for j := range min(n, L) {
				at := ((o*n+j)*inner + i) * comps
				line[j] = complex(v[at], 0)
				if comps == 2 {
					line[j] = complex(v[at], v[at+1])
				}
			}
			p.transform(line)
			for j := range int(bins) {
				at := ((o*int(bins)+j)*inner + i) * 2
				out[at], out[at+1] = real(line[j]), imag(line[j])
			}
		}
	}
	return floatOutput(c, 0, x.DType, shape, out)
}

// stftKernel is STFT: the DFTs of the frames of signal [batch, length, 1
// or 2], frame_length long and frame_step apart, each multiplied by the
// window when given; [batch, frames, bins, 2], onesided (the default)
// keeping frame_length/2+1 bins.
func stftKernel(c *Call) error {
	x, v, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() != 3 || (x.Shape[2] != 1 && x.Shape[2] != 2) {
		return c.Errorf("signal shape %v, want [batch, length, 1 or 2]", x.Shape)
	}
	step, ok, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	if !ok || len(step) != 1 || step[0] < 1 {
		return c.Errorf("frame_step %v", step)
	}
	_, win, err := optFloatInput(c, 2)
	if err != nil {
		return err
	}
	frame := int64(len(win))
	if l, ok, err := intsInput(c, 3); err != nil {
		return err
	} else if ok {
		if len(l) != 1 || l[0] < 1 || (win != nil && l[0] != frame) {
			return c.Errorf("frame_length %v with a window of %d", l, len(win))
		}
		frame = l[0]
	}
	if frame < 1 || frame > x.Shape[1] {
		return c.Errorf("frame length %d for a signal of %d", frame, x.Shape[1])
	}
	bins := frame
	if ops.Params[ops.STFTParams](c.Node, c.Opset).Onesided != 0 {
		bins = frame/2 + 1
	}
	batch, n, comps := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2])
	frames := int((x.Shape[1]-frame)/step[0] + 1)
	F, B := int(frame), int(bins)
	out := make([]float64, batch*frames*B*2)
	p := newDFTPlan(F, false)
	line := make([]complex128, F)
	for b := range batch {
		for f := range frames {
			start := f * int(step[0])
			for j := range F {
				at := (b*n + start + j) * comps
				line[j] = complex(v[at], 0)
				if comps == 2 {
					line[j] = complex(v[at], v[at+1])
				}
				if win != nil {
					line[j] *= complex(win[j], 0)
				}
			}
			p.transform(line)
			dst := out[((b*frames+f)*B)*2:]
			for j := range B {
				dst[2*j], dst[2*j+1] = real(line[j]), imag(line[j])
			}
		}
	}
	return floatOutput(c, 0, x.DType, []int64{x.Shape[0], int64(frames), bins, 2}, out)
}

// windowKernel returns the kernel of a generalized cosine window
// a0 − a1·cos(2πn/N) + a2·cos(4πn/N), with N the size (periodic, the
// default) or the size − 1 (symmetric), in output_datatype (float32 by
// default).
func windowKernel(a0, a1, a2 float64) Kernel {
	return func(c *Call) error {
		size, err := scalarInt(c, 0)
		if err != nil {
			return err
		}
		if size < 0 {
			return c.Errorf("window size %d", size)
		}
		p := ops.SignalWindowOf(c.Node, c.Opset)
		dt := graph.DType(p.OutputDatatype)
		den := float64(size)
		if p.Periodic == 0 {
			den--
		}
		if err := c.Check(graph.Double, []int64{size}); err != nil {
			return err
		}
		w := make([]float64, size)
		for i := range w {
			if den <= 0 {
				w[i] = 1
				continue
			}
			t := 2 * math.Pi * float64(i) / den
			w[i] = a0 - a1*math.Cos(t) + a2*math.Cos(2*t)
		}
		y := c.Output(0, dt, []int64{size})
		if dt == graph.String || !fromFloat64s(y, w) {
			return c.Unsupported("output_datatype %s", dt)
		}
		return nil
	}
}

// melWeightMatrixKernel is MelWeightMatrix: [dft_length/2+1,
// num_mel_bins] triangular filters of peak 1, evenly spaced on the mel
// scale mel(f) = 2595·log10(1 + f/700) between the edge frequencies, as
// the ONNX reference computes them.
func melWeightMatrixKernel(c *Call) error {
	var ints [3]int64
	for i := range ints {
		v, err := scalarInt(c, i)
		if err != nil {
			return err
		}
		ints[i] = v
	}
	mels, dftLen, rate := ints[0], ints[1], ints[2]
	_, lo, err := floatInput(c, 3)
	if err != nil {
		return err
	}
	_, hi, err := floatInput(c, 4)
	if err != nil {
		return err
	}
	if mels < 1 || dftLen < 1 || rate < 1 || len(lo) != 1 || len(hi) != 1 {
		return c.Errorf("num_mel_bins %d, dft_length %d, sample_rate %d and the edges must be positive scalars", mels, dftLen, rate)
	}
	specBins := dftLen/2 + 1
	if err := c.Check(graph.Double, []int64{specBins, mels + 2}); err != nil {
		return err
	}
	lowMel := 2595 * math.Log10(1+lo[0]/700)
	highMel := 2595 * math.Log10(1+hi[0]/700)
	step := (highMel - lowMel) / float64(mels+2)
	edges := make([]int64, mels+2)
	for i := range edges {
		f := 700 * (math.Pow(10, (float64(i)*step+lowMel)/2595) - 1)
		edges[i] = int64(math.Floor(float64(dftLen+1) * f / float64(rate)))
	}
	out := make([]float64, specBins*mels)
	set := func(j, i int64, v float64) {
		if j >= 0 && j < specBins {
			out[j*mels+i] = v
		}
	}
	for i := range mels {
		left, centre, right := edges[i], edges[i+1], edges[i+2]
		if centre == left {
			set(centre, i, 1)
		} else {
			for j := max(left, 0); j <= min(centre, specBins-1); j++ {
				set(j, i, float64(j-left)/float64(centre-left))
			}
		}
		for j := max(centre, 0); j < min(right, specBins); j++ {
			set(j, i, float64(right-j)/float64(right-centre))
		}
	}
	dt := graph.DType(ops.Params[ops.MelWeightMatrixParams](c.Node, c.Opset).OutputDatatype)
	y := c.Output(0, dt, []int64{specBins, mels})
	if dt == graph.String || !fromFloat64s(y, out) {
		return c.Unsupported("output_datatype %s", dt)
	}
	return nil
}
