package hostfallback

import (
	"math"
	"strconv"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Classical machine learning (ai.onnx.ml): Binarizer, Scaler, Normalizer,
// Imputer, ArrayFeatureExtractor, LabelEncoder, CategoryMapper,
// OneHotEncoder, FeatureVectorizer, LinearRegressor and LinearClassifier,
// following ONNX Runtime's CPU kernels where the spec leaves details open.
// Numeric inputs of any real type are read as float64; float outputs are
// float32.

func init() {
	for name, k := range map[string]Kernel{
		"Binarizer":             binarizerKernel,
		"Scaler":                scalerKernel,
		"Normalizer":            normalizerKernel,
		"Imputer":               imputerKernel,
		"ArrayFeatureExtractor": arrayFeatureExtractorKernel,
		"LabelEncoder":          labelEncoderKernel,
		"CategoryMapper":        categoryMapperKernel,
		"OneHotEncoder":         oneHotEncoderKernel,
		"FeatureVectorizer":     featureVectorizerKernel,
		"LinearRegressor":       linearRegressorKernel,
		"LinearClassifier":      linearClassifierKernel,
	} {
		RegisterDomain(ops.DomainML, name, k)
	}
}

// mlInput returns input i, numeric, as float64s with its batch geometry:
// [C] is one row of C features, [N, C...] N rows.
func mlInput(c *Call, i int) (t *graph.Tensor, v []float64, n, cols int, err error) {
	t, err = inputTensor(c, i)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	v, ok := toFloat64s(t)
	if !ok || t.DType == graph.Bool {
		return nil, nil, 0, 0, c.Unsupported("input %d of type %s", i, t.DType)
	}
	switch t.Rank() {
	case 0:
		n, cols = 1, 1
	case 1:
		n, cols = 1, int(t.Shape[0])
	default:
		n = int(t.Shape[0])
		cols = int(graph.NumElements(t.Shape[1:]))
	}
	return t, v, n, cols, nil
}

// mlFloatOutput stores v as float32 output i of the shape.
func mlFloatOutput(c *Call, i int, shape []int64, v []float64) {
	d := graph.View[float32](c.Output(i, graph.Float, shape))
	for j, x := range v {
		d[j] = float32(x)
	}
}

// binarizerKernel is Binarizer: 1 where x > threshold, else 0, in x's type.
func binarizerKernel(c *Call) error {
	x, v, _, _, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	th := float64(ops.Params[ops.BinarizerParams](c.Node, c.Opset).Threshold)
	for i, e := range v {
		if e > th {
			v[i] = 1
		} else {
			v[i] = 0
		}
	}
	fromFloat64s(c.Output(0, x.DType, x.Shape), v)
	return nil
}

// perFeature returns the attribute's value for feature j of cols: a single
// value applies to all.
func perFeature(c *Call, name string, vals []float32, cols int) (func(j int) float64, error) {
	switch len(vals) {
	case 1:
		return func(int) float64 { return float64(vals[0]) }, nil
	case cols:
		return func(j int) float64 { return float64(vals[j]) }, nil
	}
	return nil, c.Errorf("%s holds %d values for %d features", name, len(vals), cols)
}

// scalerKernel is Scaler: (x − offset)·scale per feature.
func scalerKernel(c *Call) error {
	x, v, _, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.ScalerParams](c.Node, c.Opset)
	off, err := perFeature(c, "offset", p.Offset, cols)
	if err != nil {
		return err
	}
	scale, err := perFeature(c, "scale", p.Scale, cols)
	if err != nil {
		return err
	}
	for i := range v {
		j := i % max(cols, 1)
		v[i] = (v[i] - off(j)) * scale(j)
	}
	mlFloatOutput(c, 0, x.Shape, v)
	return nil
}

// normalizerKernel is Normalizer: each row divided by its maximum (MAX),
// sum of absolute values (L1) or Euclidean norm (L2).
func normalizerKernel(c *Call) error {
	x, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	norm := ops.Params[ops.NormalizerParams](c.Node, c.Opset).Norm
	for r := range n {
		row := v[r*cols : (r+1)*cols]
		d := 0.0
		switch norm {
		case "MAX":
			d = math.Inf(-1)
			for _, e := range row {
				d = max(d, e)
			}
		case "L1":
			for _, e := range row {
				d += math.Abs(e)
			}
		case "L2":
			for _, e := range row {
				d += e * e
			}
			d = math.Sqrt(d)
		default:
			return c.Errorf("norm %q", norm)
		}
		if d != 0 {
			for j := range row {
				row[j] /= d
			}
		}
	}
	mlFloatOutput(c, 0, x.Shape, v)
	return nil
}

// imputerKernel is Imputer: values equal to the replaced value (NaN
// matching NaN) become the imputed value of their feature.
func imputerKernel(c *Call) error {
	x, v, _, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	var imputed []float32
	var from float64
	p := ops.Params[ops.ImputerParams](c.Node, c.Opset)
	if p.ImputedValueInt64s != nil {
		for _, e := range p.ImputedValueInt64s {
			imputed = append(imputed, float32(e))
		}
		from = float64(p.ReplacedValueInt64)
	} else {
		imputed = p.ImputedValueFloats
		from = float64(p.ReplacedValueFloat)
	}
	to, err := perFeature(c, "imputed values", imputed, cols)
	if err != nil {
		return err
	}
	for i, e := range v {
		if e == from || (math.IsNaN(from) && math.IsNaN(e)) {
			v[i] = to(i % max(cols, 1))
		}
	}
	fromFloat64s(c.Output(0, x.DType, x.Shape), v)
	return nil
}

// arrayFeatureExtractorKernel is ArrayFeatureExtractor: the elements at
// the given indices of the last axis ([1, K] for a 1-D input).
func arrayFeatureExtractorKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	it, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	idx, err := indexValues(c, it)
	if err != nil {
		return err
	}
	if x.Rank() == 0 {
		return c.Errorf("scalar input")
	}
	last := x.Shape[x.Rank()-1]
	for _, i := range idx {
		if i < 0 || i >= last {
			return c.Errorf("index %d out of range for %d features", i, last)
		}
	}
	shape := append([]int64{}, x.Shape...)
	shape[len(shape)-1] = int64(len(idx))
	if x.Rank() == 1 {
		shape = []int64{1, int64(len(idx))}
	}
	y := c.Output(0, x.DType, shape)
	rows := x.NumElements() / max(last, 1)
	k := int64(len(idx))
	if x.DType == graph.String {
		for r := range rows {
			for j, i := range idx {
				y.Strings[r*k+int64(j)] = x.Strings[r*last+i]
			}
		}
		return nil
	}
	es := int64(x.DType.Size())
	if es == 0 {
		return c.Unsupported("type %s", x.DType)
	}
	for r := range rows {
		for j, i := range idx {
			d, s := (r*k+int64(j))*es, (r*last+i)*es
			copy(y.Data[d:d+es], x.Data[s:s+es])
		}
	}
	return nil
}

// mlKeys returns a tensor's elements as lookup keys: strings as they are,
// numbers formatted (with -0 as 0 and every NaN alike).
func mlKeys(c *Call, t *graph.Tensor) ([]string, error) {
	if t.DType == graph.String {
		return t.Strings, nil
	}
	v, ok := toFloat64s(t)
	if !ok {
		return nil, c.Unsupported("keys of type %s", t.DType)
	}
	k := make([]string, len(v))
	for i, x := range v {
		k[i] = mlKey(x)
	}
	return k, nil
}

// mlKey formats a number as a lookup key.
func mlKey(x float64) string {
	if x == 0 {
		x = 0
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// labelEncoderKernel is LabelEncoder: each element mapped through the keys
// to the values, unmatched ones to the default. Version 1 maps strings to
// their index in classes_strings and back; later versions take keys and
// values from the *_strings, *_int64s, *_floats or *_tensor attributes.
func labelEncoderKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.LabelEncoderParams](c.Node, c.Opset)
	if c.Opset < 2 {
		classes := p.ClassesStrings
		if x.DType == graph.String {
			idx := make(map[string]int64, len(classes))
			for i, s := range classes {
				idx[s] = int64(i)
			}
			y := graph.View[int64](c.Output(0, graph.Int64, x.Shape))
			for i, s := range x.Strings {
				v, ok := idx[s]
				if !ok {
					v = p.DefaultInt64
				}
				y[i] = v
			}
			return nil
		}
		v, err := indexValues(c, x)
		if err != nil {
			return err
		}
		y := c.Output(0, graph.String, x.Shape)
		for i, k := range v {
			y.Strings[i] = p.DefaultString
			if k >= 0 && k < int64(len(classes)) {
				y.Strings[i] = classes[k]
			}
		}
		return nil
	}
	keys, err := mlAttrTensor(c, "keys", p.KeysTensor, p.KeysStrings, p.KeysInt64s, p.KeysFloats)
	if err != nil {
		return err
	}
	vals, err := mlAttrTensor(c, "values", p.ValuesTensor, p.ValuesStrings, p.ValuesInt64s, p.ValuesFloats)
	if err != nil {
		return err
	}
	if keys.NumElements() != vals.NumElements() {
		return c.Errorf("%d keys for %d values", keys.NumElements(), vals.NumElements())
	}
	ks, err := mlKeys(c, keys)
	if err != nil {
		return err
	}
	table := make(map[string]int64, len(ks))
	for i, k := range ks {
		table[k] = int64(i)
	}
	xk, err := mlKeys(c, x)
	if err != nil {
		return err
	}
	def, err := labelDefault(c, p, vals.DType)
	if err != nil {
		return err
	}
	y := c.Output(0, vals.DType, x.Shape)
	if vals.DType == graph.String {
		for i, k := range xk {
			y.Strings[i] = def.Strings[0]
			if j, ok := table[k]; ok {
				y.Strings[i] = vals.Strings[j]
			}
		}
		return nil
	}
	es := int64(vals.DType.Size())
	for i, k := range xk {
		src, at := def.Data, int64(0)
		if j, ok := table[k]; ok {
			src, at = vals.Data, j*es
		}
		copy(y.Data[int64(i)*es:int64(i+1)*es], src[at:at+es])
	}
	return nil
}

// mlAttrTensor returns the keys or values of a LabelEncoder (prefix) as a
// tensor, from whichever of its attributes prefix_tensor, prefix_strings,
// prefix_int64s and prefix_floats is set.
func mlAttrTensor(c *Call, prefix string, t *graph.Tensor, strs []string, ints []int64, floats []float32) (*graph.Tensor, error) {
	switch {
	case t != nil:
		return t, nil
	case strs != nil:
		return &graph.Tensor{DType: graph.String, Shape: []int64{int64(len(strs))}, Strings: strs}, nil
	case ints != nil:
		return graph.FromSlice(graph.Int64, []int64{int64(len(ints))}, ints)
	case floats != nil:
		return graph.FromSlice(graph.Float, []int64{int64(len(floats))}, floats)
	}
	return nil, c.Errorf("no %s attribute", prefix)
}

// labelDefault is the LabelEncoder's value for unmatched keys, a
// one-element tensor of type dt.
func labelDefault(c *Call, p *ops.LabelEncoderParams, dt graph.DType) (*graph.Tensor, error) {
	if t := p.DefaultTensor; t != nil {
		if t.DType != dt || t.NumElements() != 1 {
			return nil, c.Errorf("default_tensor %s%v for %s values", t.DType, t.Shape, dt)
		}
		return t, nil
	}
	switch dt {
	case graph.String:
		return &graph.Tensor{DType: graph.String, Shape: []int64{1}, Strings: []string{p.DefaultString}}, nil
	case graph.Int64:
		return graph.FromSlice(graph.Int64, []int64{1}, []int64{p.DefaultInt64})
	case graph.Float:
		return graph.FromSlice(graph.Float, []int64{1}, []float32{p.DefaultFloat})
	}
	t := graph.NewTensor(dt, []int64{1})
	return t, nil
}

// categoryMapperKernel is CategoryMapper: strings to int64s through the
// pairs (cats_strings[i], cats_int64s[i]), or int64s back to strings.
func categoryMapperKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.CategoryMapperParams](c.Node, c.Opset)
	strs, ints := p.CatsStrings, p.CatsInt64s
	if len(strs) != len(ints) {
		return c.Errorf("%d strings for %d integers", len(strs), len(ints))
	}
	if x.DType == graph.String {
		m := make(map[string]int64, len(strs))
		for i, s := range strs {
			m[s] = ints[i]
		}
		y := graph.View[int64](c.Output(0, graph.Int64, x.Shape))
		for i, s := range x.Strings {
			v, ok := m[s]
			if !ok {
				v = p.DefaultInt64
			}
			y[i] = v
		}
		return nil
	}
	v, err := indexValues(c, x)
	if err != nil {
		return err
	}
	m := make(map[int64]string, len(ints))
	for i, k := range ints {
		m[k] = strs[i]
	}
	y := c.Output(0, graph.String, x.Shape)
	for i, k := range v {
		s, ok := m[k]
		if !ok {
			s = p.DefaultString
		}
		y.Strings[i] = s
	}
	return nil
}

// oneHotEncoderKernel is OneHotEncoder: a trailing axis over the
// categories (cats_int64s or cats_strings) with 1 at each element's
// category; an unknown category is all zeros, or an error when zeros is 0.
func oneHotEncoderKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.OneHotEncoderParams](c.Node, c.Opset)
	var keys []string
	var cats []string
	if x.DType == graph.String {
		keys, cats = x.Strings, p.CatsStrings
	} else {
		if keys, err = mlKeys(c, x); err != nil {
			return err
		}
		for _, k := range p.CatsInt64s {
			cats = append(cats, mlKey(float64(k)))
		}
	}
	pos := make(map[string]int, len(cats))
	for i, k := range cats {
		pos[k] = i
	}
	zeros := p.Zeros != 0
	shape := append(append([]int64{}, x.Shape...), int64(len(cats)))
	y := graph.View[float32](c.Output(0, graph.Float, shape))
	for i, k := range keys {
		j, ok := pos[k]
		if !ok {
			if !zeros {
				return c.Errorf("unknown category %q", k)
			}
			continue
		}
		y[i*len(cats)+j] = 1
	}
	return nil
}

// featureVectorizerKernel is FeatureVectorizer: the inputs' features
// concatenated per row, each input cut or zero-padded to its
// inputdimensions entry.
func featureVectorizerKernel(c *Call) error {
	dims := ops.Params[ops.FeatureVectorizerParams](c.Node, c.Opset).Inputdimensions
	if len(dims) != len(c.In) {
		return c.Errorf("%d inputdimensions for %d inputs", len(dims), len(c.In))
	}
	total := int64(0)
	for _, d := range dims {
		if d < 0 {
			return c.Errorf("inputdimensions %v", dims)
		}
		total += d
	}
	rows := -1
	vals := make([][]float64, len(c.In))
	cols := make([]int, len(c.In))
	for i := range c.In {
		var n int
		var err error
		if _, vals[i], n, cols[i], err = mlInput(c, i); err != nil {
			return err
		}
		if rows >= 0 && n != rows {
			return c.Errorf("inputs of %d and %d rows", rows, n)
		}
		rows = n
	}
	out := make([]float64, int64(rows)*total)
	for r := range rows {
		at := int64(r) * total
		for i, d := range dims {
			for j := range min(int(d), cols[i]) {
				out[at+int64(j)] = vals[i][r*cols[i]+j]
			}
			at += d
		}
	}
	mlFloatOutput(c, 0, []int64{int64(rows), total}, out)
	return nil
}

// linearScores returns x·coefficientsᵀ + intercepts for each row: [n,
// targets], with targets = len(coefficients)/cols.
func linearScores(c *Call, coef, icpt []float32, v []float64, n, cols int) ([]float64, int, error) {
	if cols == 0 || len(coef)%cols != 0 || len(coef) == 0 {
		return nil, 0, c.Errorf("%d coefficients for %d features", len(coef), cols)
	}
	targets := len(coef) / cols
	if len(icpt) != 0 && len(icpt) != targets {
		return nil, 0, c.Errorf("%d intercepts for %d targets", len(icpt), targets)
	}
	out := make([]float64, n*targets)
	for r := range n {
		for t := range targets {
			s := 0.0
			if len(icpt) != 0 {
				s = float64(icpt[t])
			}
			for j := range cols {
				s += v[r*cols+j] * float64(coef[t*cols+j])
			}
			out[r*targets+t] = s
		}
	}
	return out, targets, nil
}

// postTransform applies the post_transform pt to each row of scores.
func postTransform(c *Call, pt string, scores []float64, width int) error {
	switch pt {
	case "NONE":
	case "LOGISTIC":
		for i, s := range scores {
			scores[i] = 1 / (1 + math.Exp(-s))
		}
	case "SOFTMAX", "SOFTMAX_ZERO":
		for r := 0; r+width <= len(scores) && width > 0; r += width {
			row := scores[r : r+width]
			m := math.Inf(-1)
			for _, s := range row {
				if pt == "SOFTMAX" || s != 0 {
					m = max(m, s)
				}
			}
			sum := 0.0
			for j, s := range row {
				if pt == "SOFTMAX_ZERO" && s == 0 {
					continue
				}
				row[j] = math.Exp(s - m)
				sum += row[j]
			}
			for j := range row {
				if sum > 0 {
					row[j] /= sum
				}
			}
		}
	case "PROBIT":
		for i, s := range scores {
			scores[i] = math.Sqrt2 * math.Erfinv(2*s-1)
		}
	default:
		return c.Errorf("post_transform %q", pt)
	}
	return nil
}

// linearRegressorKernel is LinearRegressor: [N, targets] scores after
// post_transform.
func linearRegressorKernel(c *Call) error {
	_, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.LinearRegressorParams](c.Node, c.Opset)
	s, targets, err := linearScores(c, p.Coefficients, p.Intercepts, v, n, cols)
	if err != nil {
		return err
	}
	if int64(targets) != p.Targets {
		return c.Errorf("%d coefficient rows for %d targets", targets, p.Targets)
	}
	if err := postTransform(c, p.PostTransform, s, targets); err != nil {
		return err
	}
	mlFloatOutput(c, 0, []int64{int64(n), int64(targets)}, s)
	return nil
}

// linearClassifierKernel is LinearClassifier: per row the label of the
// best score and the scores after post_transform. With one coefficient row
// and two labels it is a binary classifier: the second label when the
// score is positive, and scores [−s, s] (or [1−p, p] after LOGISTIC).
func linearClassifierKernel(c *Call) error {
	_, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.LinearClassifierParams](c.Node, c.Opset)
	s, classes, err := linearScores(c, p.Coefficients, p.Intercepts, v, n, cols)
	if err != nil {
		return err
	}
	return classify(c, p.ClasslabelsInts, p.ClasslabelsStrings, p.PostTransform, s, n, classes)
}

// classify writes a classifier's labels (ints, else strs) and scores
// after the post_transform pt from raw scores [n, classes].
func classify(c *Call, ints []int64, strs []string, pt string, raw []float64, n, classes int) error {
	labels := max(len(ints), len(strs))
	if labels == 0 {
		return c.Errorf("no class labels")
	}
	best := make([]int, n)
	scores := raw
	width := classes
	if classes == 1 && labels == 2 {
		width = 2
		scores = make([]float64, 2*n)
		for r := range n {
			if raw[r] > 0 {
				best[r] = 1
			}
			scores[2*r], scores[2*r+1] = -raw[r], raw[r]
		}
		if pt == "LOGISTIC" {
			for r := range n {
				p := 1 / (1 + math.Exp(-raw[r]))
				scores[2*r], scores[2*r+1] = 1-p, p
			}
		} else if err := postTransform(c, pt, scores, width); err != nil {
			return err
		}
	} else {
		if labels != classes {
			return c.Errorf("%d labels for %d classes", labels, classes)
		}
		for r := range n {
			for k := 1; k < classes; k++ {
				if raw[r*classes+k] > raw[r*classes+best[r]] {
					best[r] = k
				}
			}
		}
		if err := postTransform(c, pt, scores, width); err != nil {
			return err
		}
	}
	if len(strs) > 0 {
		y := c.Output(0, graph.String, []int64{int64(n)})
		for r, b := range best {
			y.Strings[r] = strs[b]
		}
	} else {
		y := graph.View[int64](c.Output(0, graph.Int64, []int64{int64(n)}))
		for r, b := range best {
			y[r] = ints[b]
		}
	}
	if len(c.Out) > 1 {
		mlFloatOutput(c, 1, []int64{int64(n), int64(width)}, scores)
	}
	return nil
}
