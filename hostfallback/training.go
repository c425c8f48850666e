package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// The optimizers of the ai.onnx.preview.training domain: Adagrad, Adam and
// Momentum. Each takes the learning rate R and the update count T, then
// groups of tensors (weights X, gradients G, state V and H), one tensor per
// optimized weight in each group, and outputs the updated weights and
// state, group by group. Updates are computed in float64.

func init() {
	RegisterDomain(ops.DomainTraining, "Adagrad", optimizerKernel(2, adagradStep))
	RegisterDomain(ops.DomainTraining, "Adam", optimizerKernel(3, adamStep))
	RegisterDomain(ops.DomainTraining, "Momentum", optimizerKernel(2, momentumStep))
}

// optimizerStep updates one weight tensor in place: s holds X, G and the
// state tensors after it, element by element; r is the learning rate and
// t the update count.
type optimizerStep func(c *Call, r float64, t int64, s [][]float64) error

// optimizerKernel returns the kernel of an optimizer whose inputs after R
// and T form groups of X, G and state (groups of them in all, counting
// X and G) and whose outputs are X and the state.
func optimizerKernel(state int, step optimizerStep) Kernel {
	groups := state + 1
	return func(c *Call) error {
		_, rv, err := floatInput(c, 0)
		if err != nil {
			return err
		}
		t, err := scalarInt(c, 1)
		if err != nil {
			return err
		}
		if len(rv) != 1 {
			return c.Errorf("learning rate of %d values", len(rv))
		}
		n := (len(c.In) - 2) / groups
		if n == 0 || 2+n*groups != len(c.In) {
			return c.Errorf("%d inputs do not form %d groups after R and T", len(c.In), groups)
		}
		for w := range n {
			ts := make([]*graph.Tensor, groups)
			s := make([][]float64, groups)
			for g := range groups {
				if ts[g], s[g], err = floatInput(c, 2+g*n+w); err != nil {
					return err
				}
				if len(s[g]) != len(s[0]) {
					return c.Errorf("input %d has %d elements, its weights %d", 2+g*n+w, len(s[g]), len(s[0]))
				}
			}
			if err := step(c, rv[0], t, s); err != nil {
				return err
			}
			for g := range groups {
				if g == 1 {
					continue
				}
				k := g
				if g > 1 {
					k = g - 1
				}
				if err := floatOutput(c, k*n+w, ts[g].DType, ts[g].Shape, s[g]); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// adagradStep: r' = r/(1+t·decay), g' = g + λx, h += g'², x -= r'·g'/(√h+ε).
func adagradStep(c *Call, r float64, t int64, s [][]float64) error {
	p := ops.Params[ops.AdagradParams](c.Node, c.Opset)
	lr := r / (1 + float64(t)*float64(p.DecayFactor))
	lambda, eps := float64(p.NormCoefficient), float64(p.Epsilon)
	x, g, h := s[0], s[1], s[2]
	for i := range x {
		gr := lambda*x[i] + g[i]
		h[i] += gr * gr
		x[i] -= lr * gr / (math.Sqrt(h[i]) + eps)
	}
	return nil
}

// adamStep: g' = g + λx, v = αv + (1−α)g', h = βh + (1−β)g'², the rate
// bias-corrected when t > 0, x = (1−λpost)(x − r'·v/(√h+ε)).
func adamStep(c *Call, r float64, t int64, s [][]float64) error {
	p := ops.Params[ops.AdamParams](c.Node, c.Opset)
	alpha, beta := float64(p.Alpha), float64(p.Beta)
	lambda, post := float64(p.NormCoefficient), float64(p.NormCoefficientPost)
	eps := float64(p.Epsilon)
	lr := r
	if t > 0 {
		lr = r * math.Sqrt(1-math.Pow(beta, float64(t))) / (1 - math.Pow(alpha, float64(t)))
	}
	x, g, v, h := s[0], s[1], s[2], s[3]
	for i := range x {
		gr := lambda*x[i] + g[i]
		v[i] = alpha*v[i] + (1-alpha)*gr
		h[i] = beta*h[i] + (1-beta)*gr*gr
		x[i] = (1 - post) * (x[i] - lr*v[i]/(math.Sqrt(h[i])+eps))
	}
	return nil
}

// momentumStep: g' = g + λx, v = αv + β'g' (β' = 1 on the first update),
// then x -= r·v (standard) or x -= r·(g' + αv) (nesterov).
func momentumStep(c *Call, r float64, t int64, s [][]float64) error {
	for _, name := range []string{"alpha", "beta", "norm_coefficient", "mode"} {
		if c.Node.Attr(name) == nil {
			return c.Errorf("attribute %s missing", name)
		}
	}
	p := ops.Params[ops.MomentumParams](c.Node, c.Opset)
	alpha, beta, lambda := float64(p.Alpha), float64(p.Beta), float64(p.NormCoefficient)
	if t == 0 {
		beta = 1
	}
	nesterov := false
	switch m := p.Mode; m {
	case "standard":
	case "nesterov":
		nesterov = true
	default:
		return c.Errorf("mode %q", m)
	}
	x, g, v := s[0], s[1], s[2]
	for i := range x {
		gr := lambda*x[i] + g[i]
		v[i] = alpha*v[i] + beta*gr
		if nesterov {
			x[i] -= r * (gr + alpha*v[i])
		} else {
			x[i] -= r * v[i]
		}
	}
	return nil
}
