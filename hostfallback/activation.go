package hostfallback

import (
	"math"
	"math/rand/v2"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	for name, u := range map[string]unaryOp{
		"Relu":      {f32: reluLoop[float32], f64: reluLoop[float64], ints: intRelu},
		"LeakyRelu": {f32: leakyReluLoop[float32], f64: leakyReluLoop[float64], params: floatAttrs("alpha")},
		"Elu":       {f32: eluLoop[float32], f64: eluLoop[float64], params: floatAttrs("alpha")},
		"Selu": {f32: seluLoop[float32], f64: seluLoop[float64],
			params: floatAttrs("alpha", "gamma")},
		"Celu":            {f32: celuLoop[float32], f64: celuLoop[float64], params: floatAttrs("alpha")},
		"Sigmoid":         {f32: sigmoidLoop[float32], f64: sigmoidLoop[float64]},
		"HardSigmoid":     {f32: hardSigmoidLoop[float32], f64: hardSigmoidLoop[float64], params: floatAttrs("alpha", "beta")},
		"HardSwish":       {f32: hardSwishLoop[float32], f64: hardSwishLoop[float64], params: hardSwishParams},
		"Tanh":            {f32: tanhLoop[float32], f64: tanhLoop[float64]},
		"Softplus":        {f32: softplusLoop[float32], f64: softplusLoop[float64]},
		"Softsign":        {f32: softsignLoop[float32], f64: softsignLoop[float64]},
		"Mish":            {f32: mishLoop[float32], f64: mishLoop[float64]},
		"ThresholdedRelu": {f32: thresholdedReluLoop[float32], f64: thresholdedReluLoop[float64], params: floatAttrs("alpha")},
		"Shrink":          {f32: shrinkLoop[float32], f64: shrinkLoop[float64], ints: intShrink, params: floatAttrs("lambd", "bias")},
		"Gelu":            {f32: geluLoop[float32], f64: geluLoop[float64], params: geluParams},
		"Swish":           {f32: swishLoop[float32], f64: swishLoop[float64], params: floatAttrs("alpha")},
	} {
		registerUnary(name, u)
	}
	Register("Clip", clipKernel)
	Register("Dropout", dropoutKernel)
}

// floatAttrs returns a params reader of the named float attributes, read
// into alpha and beta in turn; an absent one takes its schema's default.
func floatAttrs(names ...string) func(c *Call) unaryParams {
	return func(c *Call) unaryParams {
		var v [2]float64
		for i, name := range names {
			v[i] = float64(ops.AttrFloat(c.Node, c.Opset, name))
		}
		return unaryParams{alpha: v[0], beta: v[1]}
	}
}

// hardSwishParams are HardSigmoid's alpha and beta that HardSwish fixes.
func hardSwishParams(*Call) unaryParams { return unaryParams{alpha: 1.0 / 6, beta: 0.5} }

// geluParams reads Gelu's approximate attribute ("none" or "tanh").
func geluParams(c *Call) unaryParams {
	return unaryParams{tanh: ops.Params[ops.GeluParams](c.Node, c.Opset).Approximate == "tanh"}
}

// reluLoop is max(x, 0); NaN stays NaN.
func reluLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = max(v, 0)
	}
}

// leakyReluLoop is x for x >= 0, alpha*x below, without branches.
func leakyReluLoop[T floating](d, s []T, p *unaryParams) {
	a := T(p.alpha)
	for i, v := range s[:len(d)] {
		d[i] = max(v, 0) + a*min(v, 0)
	}
}

// eluLoop is x for x >= 0, alpha*(e^x - 1) below.
func eluLoop[T floating](d, s []T, p *unaryParams) {
	for i, v := range s[:len(d)] {
		if v < 0 {
			v = T(p.alpha * math.Expm1(float64(v)))
		}
		d[i] = v
	}
}

// seluLoop is gamma * (x > 0 ? x : alpha*(e^x - 1)), with gamma in p.beta.
func seluLoop[T floating](d, s []T, p *unaryParams) {
	for i, v := range s[:len(d)] {
		x := float64(v)
		if x <= 0 {
			x = p.alpha * math.Expm1(x)
		}
		d[i] = T(p.beta * x)
	}
}

// celuLoop is max(0,x) + min(0, alpha*(e^(x/alpha) - 1)).
func celuLoop[T floating](d, s []T, p *unaryParams) {
	for i, v := range s[:len(d)] {
		if v < 0 {
			v = T(p.alpha * math.Expm1(float64(v)/p.alpha))
		}
		d[i] = v
	}
}

// sigmoidLoop is 1/(1+e^-x); for very negative x, e^-x overflows to +Inf
// and the result is the correct 0.
func sigmoidLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(1 / (1 + math.Exp(-float64(v))))
	}
}

// hardSigmoidLoop is max(0, min(1, alpha*x + beta)), the product rounded
// before the sum (the conversion keeps the compiler from fusing them, as
// it would on arm64), as the fused activations compute it.
func hardSigmoidLoop[T floating](d, s []T, p *unaryParams) {
	a, b := T(p.alpha), T(p.beta)
	for i, v := range s[:len(d)] {
		d[i] = max(0, min(1, T(a*v)+b))
	}
}

// hardSwishLoop is x * max(0, min(1, alpha*x + beta)) with alpha 1/6 and
// beta 0.5.
func hardSwishLoop[T floating](d, s []T, p *unaryParams) {
	a, b := T(p.alpha), T(p.beta)
	for i, v := range s[:len(d)] {
		d[i] = v * max(0, min(1, T(a*v)+b))
	}
}

// tanhLoop is tanh(x).
func tanhLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(math.Tanh(float64(v)))
	}
}

// softplus is log(1+e^x), computed as max(x,0) + log(1+e^-|x|) so that
// e^x never overflows.
func softplus(x float64) float64 {
	return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// softplusLoop is log(1+e^x).
func softplusLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(softplus(float64(v)))
	}
}

// softsignLoop is x/(1+|x|).
func softsignLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		d[i] = T(float64(v) / (1 + math.Abs(float64(v))))
	}
}

// mishLoop is x * tanh(softplus(x)).
func mishLoop[T floating](d, s []T, _ *unaryParams) {
	for i, v := range s[:len(d)] {
		x := float64(v)
		d[i] = T(x * math.Tanh(softplus(x)))
	}
}

// thresholdedReluLoop is x where x > alpha, else 0.
func thresholdedReluLoop[T floating](d, s []T, p *unaryParams) {
	a := T(p.alpha)
	for i, v := range s[:len(d)] {
		if !(v > a) {
			v = 0
		}
		d[i] = v
	}
}

// shrinkLoop is x+bias below -lambd, x-bias above lambd, else 0.
func shrinkLoop[T floating](d, s []T, p *unaryParams) {
	l, b := T(p.alpha), T(p.beta)
	for i, v := range s[:len(d)] {
		switch {
		case v < -l:
			d[i] = v + b
		case v > l:
			d[i] = v - b
		default:
			d[i] = 0
		}
	}
}

// swishLoop is x·sigmoid(alpha·x), computed as x/(1+e^(-alpha·x)).
func swishLoop[T floating](d, s []T, p *unaryParams) {
	for i, v := range s[:len(d)] {
		x := float64(v)
		d[i] = T(x / (1 + math.Exp(-p.alpha*x)))
	}
}

// geluLoop is x*Φ(x) = x/2 * (1 + erf(x/√2)), or with the tanh
// approximation x/2 * (1 + tanh(√(2/π) * (x + 0.044715x³))).
func geluLoop[T floating](d, s []T, p *unaryParams) {
	if p.tanh {
		k := math.Sqrt(2 / math.Pi)
		for i, v := range s[:len(d)] {
			x := float64(v)
			d[i] = T(0.5 * x * (1 + math.Tanh(k*(x+0.044715*x*x*x))))
		}
		return
	}
	for i, v := range s[:len(d)] {
		x := float64(v)
		d[i] = T(0.5 * x * (1 + math.Erf(x/math.Sqrt2)))
	}
}

// clipKernel is Clip: min and max come from optional scalar inputs (every
// real numeric type). An absent bound does not clip; when min > max every element
// becomes max. NaN stays NaN.
func clipKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if isHalf(x.DType) {
		return viaFloat32(c, x.DType, clipKernel)
	}
	y := c.OutputUninit(0, x.DType, x.Shape) // clipTyped writes every element
	switch x.DType {
	case graph.Float:
		return clipTyped[float32](c, y, x)
	case graph.Double:
		return clipTyped[float64](c, y, x)
	case graph.Int8:
		return clipTyped[int8](c, y, x)
	case graph.Int16:
		return clipTyped[int16](c, y, x)
	case graph.Int32:
		return clipTyped[int32](c, y, x)
	case graph.Int64:
		return clipTyped[int64](c, y, x)
	case graph.Uint8:
		return clipTyped[uint8](c, y, x)
	case graph.Uint16:
		return clipTyped[uint16](c, y, x)
	case graph.Uint32:
		return clipTyped[uint32](c, y, x)
	case graph.Uint64:
		return clipTyped[uint64](c, y, x)
	}
	return c.Unsupported("element type %s", x.DType)
}

// clipTyped clamps x into y for element type T, reading the bounds from
// inputs 1 and 2.
func clipTyped[T realNumber](c *Call, y, x *graph.Tensor) error {
	lo, hi := typeLimits[T]()
	for i, bound := range []*T{&lo, &hi} {
		t := c.Tensor(i + 1)
		if t == nil {
			continue
		}
		if t.DType != x.DType || t.NumElements() != 1 {
			return c.Errorf("input %d must be a single %s, not %s%v", i+1, x.DType, t.DType, t.Shape)
		}
		*bound = graph.View[T](t)[0]
	}
	d, s := graph.View[T](y), graph.View[T](x)
	c.Threads.For(len(d), parallelGrain, func(i0, i1 int) {
		for i, v := range s[i0:i1] {
			d[i0+i] = min(max(v, lo), hi)
		}
	})
	return nil
}

// dropoutKernel is Dropout: the identity unless the training_mode input is
// true: then each element is kept with probability 1-ratio (ratio input,
// default 0.5) and scaled by 1/(1-ratio), from a PCG generator seeded with
// the seed attribute (a random seed when absent). The optional bool mask
// output is true where elements are kept. (Canonicalize turns the versions
// before 12, the identity as inference runtimes treat them, into this
// form.)
func dropoutKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	training := false
	ratio := 0.5
	if r := c.Tensor(1); r != nil {
		if !r.DType.IsFloat() || r.NumElements() != 1 {
			return c.Errorf("ratio must be a float scalar, not %s%v", r.DType, r.Shape)
		}
		ratio = r.Float64At(0)
	}
	if t := c.Tensor(2); t != nil {
		if t.DType != graph.Bool || t.NumElements() != 1 {
			return c.Errorf("training_mode must be a bool scalar, not %s%v", t.DType, t.Shape)
		}
		training = t.Data[0] != 0
	}
	if !training || ratio == 0 {
		copyTensor(c.Output(0, x.DType, x.Shape), x)
		if wantOutput(c, 1) {
			return dropoutMask(c, x, nil)
		}
		return nil
	}
	if isHalf(x.DType) {
		return viaFloat32(c, x.DType, dropoutKernel)
	}
	if ratio < 0 || ratio >= 1 {
		return c.Errorf("ratio %g outside [0, 1)", ratio)
	}
	seed := rand.Uint64()
	if p := ops.Params[ops.DropoutParams](c.Node, c.Opset); p.Seed != nil {
		seed = uint64(*p.Seed)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	keep := make([]bool, x.NumElements())
	for i := range keep {
		keep[i] = rng.Float64() >= ratio
	}
	scale := 1 / (1 - ratio)
	y := c.Output(0, x.DType, x.Shape)
	switch x.DType {
	case graph.Float:
		dropoutApply(graph.View[float32](y), graph.View[float32](x), keep, scale)
	case graph.Double:
		dropoutApply(graph.View[float64](y), graph.View[float64](x), keep, scale)
	default:
		return c.Unsupported("element type %s in training mode", x.DType)
	}
	if wantOutput(c, 1) {
		return dropoutMask(c, x, keep)
	}
	return nil
}

// dropoutApply keeps the elements marked in keep, scaled, and zeroes
// the rest.
func dropoutApply[T floating](d, s []T, keep []bool, scale float64) {
	for i, k := range keep {
		d[i] = 0
		if k {
			d[i] = T(float64(s[i]) * scale)
		}
	}
}

// dropoutMask sets Dropout's mask output: keep, or all true when keep is
// nil.
func dropoutMask(c *Call, x *graph.Tensor, keep []bool) error {
	m := c.Output(1, graph.Bool, x.Shape)
	for i := range m.Data {
		m.Data[i] = 1
		if keep != nil && !keep[i] {
			m.Data[i] = 0
		}
	}
	return nil
}
