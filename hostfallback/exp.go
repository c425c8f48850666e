package hostfallback

import "math"

// expF32 is exp in float32 arithmetic after Cephes' expf, the algorithm
// of the vectorised kernels: the argument is clamped to [−87.3, 88.3] (so
// that the result stays a normal number; NaN stays NaN), split as
// n·ln2 + r with |r| ≤ ln2/2, and exp(r) comes from a degree-7
// polynomial. The relative error is a few ulp.
func expF32(x float32) float32 {
	if x != x {
		return x
	}
	x = min(max(x, -87.3), 88.3)
	n := float32(math.RoundToEven(float64(x * 1.44269504088896341)))
	r := x - n*0.693359375 + n*2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	e := p*r*r + r + 1
	return e * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// tanhF32 is tanh in float32 arithmetic after Cephes' tanhf: an odd
// polynomial for |x| < 0.625, 1 − 2/(e^{2|x|} + 1) (with expF32) beyond,
// with the sign of x. The relative error is a few ulp; NaN stays NaN.
func tanhF32(x float32) float32 {
	a := float32(math.Abs(float64(x)))
	if a >= 0.625 {
		t := 1 - 2/(expF32(2*a)+1)
		return float32(math.Copysign(float64(t), float64(x)))
	}
	z := x * x
	p := float32(-5.70498872745e-3)
	p = p*z + 2.06390887954e-2
	p = p*z - 5.37397155531e-2
	p = p*z + 1.33314422036e-1
	p = p*z - 3.33332819422e-1
	return float32(math.Copysign(float64(p*z*x+x), float64(x)))
}

// expShiftF32Go is the portable expShiftF32.
func expShiftF32Go(x, y []float32, m float32) float32 {
	y = y[:len(x)]
	var s float32
	for i, v := range x {
		e := expF32(v - m)
		y[i] = e
		s += e
	}
	return s
}
