package ops

import "github.com/onnxvk/onnxvk/graph"

// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.

func init() {
	setRule(inferQuantize, "QuantizeLinear")
	setRule(inferDequantize, "DequantizeLinear")
	setRule(inferDynamicQuantize, "DynamicQuantizeLinear")
}

// inferQuantize keeps the shape; the element type is output_dtype (opset
// 21), else the zero point's, else uint8.
func inferQuantize(c *InferContext) error {
	dt := graph.DType(QuantizationOf(c.Node, c.Opset).OutputDtype)
	if dt == graph.Undefined {
		dt = c.inElem(2)
	}
	if dt == graph.Undefined {
		dt = graph.Uint8
	}
	c.setTensor(0, dt, c.inShape(0).Clone())
	return nil
}

// inferDequantize keeps the shape in the scale's type (float32 before
// opset 19 allowed others).
func inferDequantize(c *InferContext) error {
	dt := c.inElem(1)
	if dt == graph.Undefined || c.Opset < 19 {
		dt = graph.Float
	}
	c.setTensor(0, dt, c.inShape(0).Clone())
	return nil
}

// inferDynamicQuantize gives uint8 data, a float32 scale and a uint8 zero
// point.
func inferDynamicQuantize(c *InferContext) error {
	c.setTensor(0, graph.Uint8, c.inShape(0).Clone())
	c.setTensor(1, graph.Float, graph.Shape{})
	c.setTensor(2, graph.Uint8, graph.Shape{})
	return nil
}
