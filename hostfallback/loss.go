package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, computed
// in float64 and stored in the input's float type.

func init() {
	Register("NegativeLogLikelihoodLoss", nllLossKernel)
	Register("SoftmaxCrossEntropyLoss", sceLossKernel)
}

// nllLossKernel is NegativeLogLikelihoodLoss: input [N, C, d...] of log
// probabilities, target [N, d...] of class indices, optional weight [C].
func nllLossKernel(c *Call) error {
	x, v, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	return nllLoss(c, x.DType, x.Shape, v)
}

// sceLossKernel is SoftmaxCrossEntropyLoss: the NLL loss of the log
// softmax of the scores along axis 1; output 1, when present, is that log
// softmax.
func sceLossKernel(c *Call) error {
	x, v, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() < 2 {
		return c.Errorf("scores of rank %d, want at least 2", x.Rank())
	}
	n, cl := int(x.Shape[0]), int(x.Shape[1])
	inner := int(graph.NumElements(x.Shape[2:]))
	for b := range n {
		for i := range inner {
			base := b*cl*inner + i
			m := math.Inf(-1)
			for k := range cl {
				m = max(m, v[base+k*inner])
			}
			s := 0.0
			for k := range cl {
				s += math.Exp(v[base+k*inner] - m)
			}
			ls := m + math.Log(s)
			for k := range cl {
				v[base+k*inner] -= ls
			}
		}
	}
	if len(c.Out) > 1 && c.Node.Outputs[1] != "" {
		if err := floatOutput(c, 1, x.DType, x.Shape, v); err != nil {
			return err
		}
	}
	return nllLoss(c, x.DType, x.Shape, v)
}

// nllLoss computes output 0 of both losses from the log probabilities lp
// of shape [N, C, d...], reading the target from input 1 and the weights
// from input 2.
func nllLoss(c *Call, dt graph.DType, shape []int64, lp []float64) error {
	if len(shape) < 2 {
		return c.Errorf("input of rank %d, want at least 2", len(shape))
	}
	tt, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	target, err := indexValues(c, tt)
	if err != nil {
		return err
	}
	n, cl := shape[0], shape[1]
	inner := graph.NumElements(shape[2:])
	if tt.Rank() != len(shape)-1 || int64(len(target)) != n*inner || (tt.Rank() > 0 && tt.Shape[0] != n) {
		return c.Errorf("target shape %v does not match input shape %v", tt.Shape, shape)
	}
	_, w, err := optFloatInput(c, 2)
	if err != nil {
		return err
	}
	if w != nil && int64(len(w)) != cl {
		return c.Errorf("%d weights for %d classes", len(w), cl)
	}
	ignore := c.Node.Attr("ignore_index")
	loss := make([]float64, len(target))
	wsum := 0.0
	for i, t := range target {
		if ignore != nil && t == ignore.I {
			continue
		}
		if t < 0 || t >= cl {
			return c.Errorf("target %d out of range for %d classes", t, cl)
		}
		wt := 1.0
		if w != nil {
			wt = w[t]
		}
		b, j := int64(i)/inner, int64(i)%inner
		loss[i] = -lp[(b*cl+t)*inner+j] * wt
		wsum += wt
	}
	switch red := ops.LossOf(c.Node, c.Opset).Reduction; red {
	case "none":
		return floatOutput(c, 0, dt, tt.Shape, loss)
	case "sum", "mean":
		s := 0.0
		for _, l := range loss {
			s += l
		}
		if red == "mean" {
			s /= wsum
		}
		return floatOutput(c, 0, dt, nil, []float64{s})
	default:
		return c.Unsupported("reduction %q", red)
	}
}
