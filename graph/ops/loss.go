package ops

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// Losses, text ops, signal ops and the ai.onnx.preview.training optimisers.

func init() {
	setRule(inferNLLLoss, "NegativeLogLikelihoodLoss")
	setRule(inferSCELoss, "SoftmaxCrossEntropyLoss")
	setRule(inferTfIdf, "TfIdfVectorizer")
	setRule(inferStringNormalizer, "StringNormalizer")
	setRule(inferSTFT, "STFT")
	setRule(inferMelWeightMatrix, "MelWeightMatrix")
	SetInfer(DomainTraining, "Adagrad", 0, 0, inferOptimizer(3, 0, 2))
	SetInfer(DomainTraining, "Momentum", 0, 0, inferOptimizer(3, 0, 2))
	SetInfer(DomainTraining, "Adam", 0, 0, inferOptimizer(4, 0, 2, 3))
}

// lossShape is the loss output: the target's shape with reduction "none",
// a scalar otherwise.
func lossShape(c *InferContext, target int) graph.Shape {
	if LossOf(c.Node, c.Opset).Reduction == "none" {
		return c.inShape(target).Clone()
	}
	return graph.Shape{}
}

// inferNLLLoss is NegativeLogLikelihoodLoss.
func inferNLLLoss(c *InferContext) error {
	c.setTensor(0, c.inElem(0), lossShape(c, 1))
	return nil
}

// inferSCELoss is SoftmaxCrossEntropyLoss: the loss and the log
// probabilities, shaped like the scores.
func inferSCELoss(c *InferContext) error {
	c.setTensor(0, c.inElem(0), lossShape(c, 1))
	c.setTensor(1, c.inElem(0), c.inShape(0).Clone())
	return nil
}

// inferTfIdf gives float32 [max(ngram_indexes)+1], with the batch axis of a
// 2-D input in front.
func inferTfIdf(c *InferContext) error {
	width := int64(0)
	for _, i := range Params[TfIdfVectorizerParams](c.Node, c.Opset).NgramIndexes {
		width = max(width, i+1)
	}
	xs := c.inShape(0)
	switch len(xs) {
	case 1:
		c.setTensor(0, graph.Float, graph.ShapeOf(width))
	case 2:
		c.setTensor(0, graph.Float, graph.Shape{xs[0], graph.DimOf(width)})
	default:
		c.setTensor(0, graph.Float, nil)
	}
	return nil
}

// inferStringNormalizer keeps the shape unless stop words may drop entries
// (an empty result keeps one element).
func inferStringNormalizer(c *InferContext) error {
	xs := c.inShape(0).Clone()
	if len(xs) > 0 && c.Node.Attr("stopwords") != nil {
		xs[len(xs)-1] = graph.UnknownDim()
	}
	c.setTensor(0, graph.String, xs)
	return nil
}

// inferSTFT is [batch, frames, bins, 2]; frames = (length - frame_length) /
// frame_step + 1, bins = frame_length (half plus one when onesided).
func inferSTFT(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	out := unknownShape(4)
	out[3] = graph.DimOf(2)
	if len(xs) == 3 {
		out[0] = xs[0]
	}
	step, okStep := c.intsIn(1)
	frame := int64(-1)
	if v, ok := c.intsIn(3); ok && len(v) == 1 {
		frame = v[0]
	} else if ws := c.inShape(2); len(ws) == 1 && ws[0].Known() {
		frame = ws[0].Value
	}
	if frame > 0 {
		bins := frame
		if Params[STFTParams](c.Node, c.Opset).Onesided != 0 {
			bins = frame/2 + 1
		}
		out[2] = graph.DimOf(bins)
		if okStep && len(step) == 1 && step[0] > 0 && len(xs) == 3 && xs[1].Known() {
			if xs[1].Value < frame {
				return fmt.Errorf("frame length %d longer than the signal %d", frame, xs[1].Value)
			}
			out[1] = graph.DimOf((xs[1].Value-frame)/step[0] + 1)
		}
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferMelWeightMatrix is [dft_length/2 + 1, num_mel_bins].
func inferMelWeightMatrix(c *InferContext) error {
	dt := graph.DType(Params[MelWeightMatrixParams](c.Node, c.Opset).OutputDatatype)
	out := unknownShape(2)
	if v, ok := c.intsIn(0); ok && len(v) == 1 {
		out[1] = graph.DimOf(v[0])
	}
	if v, ok := c.intsIn(1); ok && len(v) == 1 {
		out[0] = graph.DimOf(v[0]/2 + 1)
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferOptimizer is the rule of the training optimisers, whose inputs are
// R, T and then groups of n tensors each (weights, gradients, state...):
// output group k has the types of input group outGroups[k].
func inferOptimizer(groups int, outGroups ...int) InferFunc {
	return func(c *InferContext) error {
		n := (len(c.Node.Inputs) - 2) / groups
		if n <= 0 || 2+n*groups != len(c.Node.Inputs) {
			return fmt.Errorf("%d inputs do not form %d groups after R and T", len(c.Node.Inputs), groups)
		}
		for k, g := range outGroups {
			for i := range n {
				c.set(k*n+i, c.in(2+g*n+i).Clone())
			}
		}
		return nil
	}
}
