package ops

import "github.com/onnxvk/onnxvk/graph"

// Rules of the classical machine-learning ops of ai.onnx.ml.

func init() {
	mlRule := func(f InferFunc, names ...string) {
		for _, n := range names {
			SetInfer(DomainML, n, 0, 0, f)
		}
	}
	mlRule(passThrough, "Binarizer", "Imputer")
	mlRule(inferMLFloat, "Normalizer", "Scaler")
	mlRule(inferLabelEncoder, "LabelEncoder")
	mlRule(inferCategoryMapper, "CategoryMapper")
	mlRule(inferRegressor, "LinearRegressor", "TreeEnsembleRegressor", "SVMRegressor")
	mlRule(inferClassifier, "LinearClassifier", "SVMClassifier", "TreeEnsembleClassifier")
	mlRule(inferArrayFeatureExtractor, "ArrayFeatureExtractor")
	mlRule(inferOneHotEncoder, "OneHotEncoder")
	mlRule(inferFeatureVectorizer, "FeatureVectorizer")
}

// inferMLFloat keeps the shape in float32.
func inferMLFloat(c *InferContext) error {
	c.setTensor(0, graph.Float, c.inShape(0).Clone())
	return nil
}

// inferLabelEncoder keeps the shape; the element type follows the values
// attribute that is set (version 1 maps strings to int64 and back).
func inferLabelEncoder(c *InferContext) error {
	dt := graph.Undefined
	switch {
	case c.Opset < 2 && c.inElem(0) == graph.String:
		dt = graph.Int64
	case c.Opset < 2:
		dt = graph.String
	case c.Node.Attr("values_strings") != nil:
		dt = graph.String
	case c.Node.Attr("values_int64s") != nil:
		dt = graph.Int64
	case c.Node.Attr("values_floats") != nil:
		dt = graph.Float
	case c.Node.AttrTensor("values_tensor") != nil:
		dt = c.Node.AttrTensor("values_tensor").DType
	}
	c.setTensor(0, dt, c.inShape(0).Clone())
	return nil
}

// inferCategoryMapper swaps strings and int64s, keeping the shape.
func inferCategoryMapper(c *InferContext) error {
	dt := graph.String
	if c.inElem(0) == graph.String {
		dt = graph.Int64
	}
	c.setTensor(0, dt, c.inShape(0).Clone())
	return nil
}

// batchDim is the batch size of a [N, C] (or [C], a batch of one) input.
func batchDim(c *InferContext) graph.Dim {
	switch xs := c.inShape(0); len(xs) {
	case 1:
		return graph.DimOf(1)
	case 2:
		return xs[0]
	}
	return graph.UnknownDim()
}

// inferRegressor gives float32 [N, targets]: LinearRegressor's targets,
// TreeEnsembleRegressor's n_targets, SVMRegressor's one.
func inferRegressor(c *InferContext) error {
	targets := int64(1)
	switch p := ParamsOf(c.Node, c.Opset).(type) {
	case *LinearRegressorParams:
		targets = p.Targets
	case *TreeEnsembleRegressorParams:
		targets = p.NTargets
	}
	c.setTensor(0, graph.Float, graph.Shape{batchDim(c), graph.DimOf(targets)})
	return nil
}

// inferClassifier gives the labels [N] (int64 or string) and float32
// scores [N, classes].
func inferClassifier(c *InferContext) error {
	var ints []int64
	var strs []string
	switch p := ParamsOf(c.Node, c.Opset).(type) {
	case *LinearClassifierParams:
		ints, strs = p.ClasslabelsInts, p.ClasslabelsStrings
	case *SVMClassifierParams:
		ints, strs = p.ClasslabelsInts, p.ClasslabelsStrings
	case *TreeEnsembleClassifierParams:
		ints, strs = p.ClasslabelsInt64s, p.ClasslabelsStrings
	}
	labels, classes := graph.String, graph.UnknownDim()
	if ints != nil {
		labels, classes = graph.Int64, graph.DimOf(int64(len(ints)))
	} else if strs != nil {
		classes = graph.DimOf(int64(len(strs)))
	}
	n := batchDim(c)
	c.setTensor(0, labels, graph.Shape{n})
	c.setTensor(1, graph.Float, graph.Shape{n, classes})
	return nil
}

// inferArrayFeatureExtractor replaces the last axis by the indices' count.
func inferArrayFeatureExtractor(c *InferContext) error {
	xs := c.inShape(0)
	if len(xs) == 0 {
		c.setTensor(0, c.inElem(0), nil)
		return nil
	}
	out := xs.Clone()
	out[len(out)-1] = shapeProduct(c.inShape(1))
	if c.inShape(1) == nil {
		out[len(out)-1] = graph.UnknownDim()
	}
	c.setTensor(0, c.inElem(0), out)
	return nil
}

// inferOneHotEncoder appends the category count to the input's shape.
func inferOneHotEncoder(c *InferContext) error {
	p := Params[OneHotEncoderParams](c.Node, c.Opset)
	n := len(p.CatsInt64s) + len(p.CatsStrings)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, graph.Float, nil)
		return nil
	}
	c.setTensor(0, graph.Float, append(xs.Clone(), graph.DimOf(int64(n))))
	return nil
}

// inferFeatureVectorizer gives float32 [N, sum(inputdimensions)].
func inferFeatureVectorizer(c *InferContext) error {
	var total int64
	for _, d := range Params[FeatureVectorizerParams](c.Node, c.Opset).Inputdimensions {
		total += d
	}
	c.setTensor(0, graph.Float, graph.Shape{batchDim(c), graph.DimOf(total)})
	return nil
}
