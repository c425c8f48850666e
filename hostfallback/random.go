package hostfallback

import (
	"math"
	"math/rand/v2"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Random generators: RandomUniform, RandomNormal, their Like forms,
// Bernoulli and Multinomial. They draw from a PCG generator seeded with the
// seed attribute (a float, whose bits seed it), or from a random seed when
// it is absent: a seeded node gives the same values on every run, but they
// do not match the values of other runtimes, whose generators differ.

func init() {
	Register("RandomUniform", randomKernel(false, false))
	Register("RandomNormal", randomKernel(true, false))
	Register("RandomUniformLike", randomKernel(false, true))
	Register("RandomNormalLike", randomKernel(true, true))
	Register("Bernoulli", bernoulliKernel)
	Register("Multinomial", multinomialKernel)
}

// randomSource returns the node's generator.
func randomSource(c *Call) *rand.Rand {
	seed := rand.Uint64()
	if a := c.Node.Attr("seed"); a != nil {
		seed = uint64(math.Float32bits(a.F))
	}
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// randomKernel returns the kernel of RandomUniform (values in [low, high))
// or RandomNormal (mean, scale); the Like forms take the shape, and by
// default the type, from their input.
func randomKernel(normal, like bool) Kernel {
	return func(c *Call) error {
		dt := graph.Float
		var shape []int64
		if like {
			x, err := inputTensor(c, 0)
			if err != nil {
				return err
			}
			dt, shape = x.DType, x.Shape
		} else {
			a := c.Node.Attr("shape")
			if a == nil {
				return c.Errorf("shape attribute missing")
			}
			shape = a.Ints
		}
		if a := c.Node.Attr("dtype"); a != nil {
			dt = graph.DType(a.I)
		}
		if !isFloatType(dt) {
			return c.Unsupported("dtype %s", dt)
		}
		if err := c.Check(graph.Double, shape); err != nil {
			return err
		}
		rng := randomSource(c)
		v := make([]float64, graph.NumElements(shape))
		if normal {
			mean, scale := randomNormalParams(c, like)
			for i := range v {
				v[i] = mean + scale*rng.NormFloat64()
			}
		} else {
			lo, hi := randomUniformParams(c, like)
			for i := range v {
				v[i] = lo + (hi-lo)*rng.Float64()
			}
		}
		return floatOutput(c, 0, dt, shape, v)
	}
}

// bernoulliKernel is Bernoulli: 1 with the probability its input gives,
// else 0, in dtype (the input's type by default).
func bernoulliKernel(c *Call) error {
	x, p, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	dt := x.DType
	if a := c.Node.Attr("dtype"); a != nil {
		dt = graph.DType(a.I)
	}
	rng := randomSource(c)
	v := make([]float64, len(p))
	for i, q := range p {
		if rng.Float64() < q {
			v[i] = 1
		}
	}
	y := c.Output(0, dt, x.Shape)
	if dt == graph.String || !fromFloat64s(y, v) {
		return c.Unsupported("dtype %s", dt)
	}
	return nil
}

// multinomialKernel is Multinomial: sample_size class indices per row of
// unnormalized log-probabilities [batch, classes], as int32 (dtype 6) or
// int64 (dtype 7).
func multinomialKernel(c *Call) error {
	x, lp, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() != 2 || x.Shape[1] == 0 {
		return c.Errorf("input shape %v, want [batch, classes]", x.Shape)
	}
	p := ops.Params[ops.MultinomialParams](c.Node, c.Opset)
	dt := graph.DType(p.Dtype)
	if dt != graph.Int32 && dt != graph.Int64 {
		return c.Errorf("dtype %s, want int32 or int64", dt)
	}
	samples := p.SampleSize
	if samples < 0 {
		return c.Errorf("sample_size %d", samples)
	}
	if err := c.Check(graph.Double, []int64{x.Shape[0], samples}); err != nil {
		return err
	}
	rng := randomSource(c)
	batch, k := int(x.Shape[0]), int(x.Shape[1])
	out := make([]float64, int64(batch)*samples)
	cdf := make([]float64, k)
	for b := range batch {
		row := lp[b*k : (b+1)*k]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		total := 0.0
		for i, v := range row {
			total += math.Exp(v - m)
			cdf[i] = total
		}
		for s := range samples {
			u := rng.Float64() * total
			j := 0
			for j < k-1 && cdf[j] <= u {
				j++
			}
			out[int64(b)*samples+s] = float64(j)
		}
	}
	if !fromFloat64s(c.Output(0, dt, []int64{x.Shape[0], samples}), out) {
		return c.Unsupported("dtype %s", dt)
	}
	return nil
}

// randomNormalParams returns the mean and scale of RandomNormal or, when
// like, RandomNormalLike.
func randomNormalParams(c *Call, like bool) (mean, scale float64) {
	if like {
		p := ops.Params[ops.RandomNormalLikeParams](c.Node, c.Opset)
		return float64(p.Mean), float64(p.Scale)
	}
	p := ops.Params[ops.RandomNormalParams](c.Node, c.Opset)
	return float64(p.Mean), float64(p.Scale)
}

// randomUniformParams returns the bounds of RandomUniform or, when like,
// RandomUniformLike.
func randomUniformParams(c *Call, like bool) (lo, hi float64) {
	if like {
		p := ops.Params[ops.RandomUniformLikeParams](c.Node, c.Opset)
		return float64(p.Low), float64(p.High)
	}
	p := ops.Params[ops.RandomUniformParams](c.Node, c.Opset)
	return float64(p.Low), float64(p.High)
}
