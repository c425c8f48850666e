package ops

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// schema is shorthand for one catalog entry of the default domain.
func schema(name string, since int64, minIn, maxIn, minOut, maxOut int, attrs ...AttrSpec) *Schema {
	return &Schema{Name: name, Since: since, MinInputs: minIn, MaxInputs: maxIn,
		MinOutputs: minOut, MaxOutputs: maxOut, Attrs: attrs}
}

// optionalInputs marks inputs of s below its minimum that may be omitted.
func optionalInputs(s *Schema, idx ...int) *Schema {
	s.OptionalInputs = idx
	return s
}

// laterSchemas returns the operator versions of ai.onnx opsets 18 to 24
// (ONNX 1.13 to 1.19) and ai.onnx.ml opset 4, which the generator's onnx
// package predates. Where a version of opsets 18 to 21 only widened the
// accepted types, its attributes are the previous version's; those of
// opsets 22 to 24 are in typeWidened.
func laterSchemas() []*Schema {
	reduceAttrs := []AttrSpec{defInt("keepdims", 1), defInt("noop_with_empty_axes", 0)}
	resizeAttrs := []AttrSpec{defInt("antialias", 0), opt("axes", graph.AttrInts),
		defString("coordinate_transformation_mode", "half_pixel"), defFloat("cubic_coeff_a", -0.75),
		defInt("exclude_outside", 0), defFloat("extrapolation_value", 0),
		defString("keep_aspect_ratio_policy", "stretch"), defString("mode", "nearest"),
		defString("nearest_mode", "round_prefer_floor")}
	constantAttrs := []AttrSpec{opt("sparse_value", graph.AttrSparseTensor), opt("value", graph.AttrTensor),
		opt("value_float", graph.AttrFloat), opt("value_floats", graph.AttrFloats),
		opt("value_int", graph.AttrInt), opt("value_ints", graph.AttrInts),
		opt("value_string", graph.AttrString), opt("value_strings", graph.AttrStrings)}
	scanAttrs := []AttrSpec{req("body", graph.AttrGraph), req("num_scan_inputs", graph.AttrInt),
		opt("scan_input_axes", graph.AttrInts), opt("scan_input_directions", graph.AttrInts),
		opt("scan_output_axes", graph.AttrInts), opt("scan_output_directions", graph.AttrInts)}
	ifAttrs := []AttrSpec{req("else_branch", graph.AttrGraph), req("then_branch", graph.AttrGraph)}
	loopAttrs := []AttrSpec{req("body", graph.AttrGraph)}
	padAttrs := []AttrSpec{defString("mode", "constant")}
	castAttrs := []AttrSpec{defInt("saturate", 1), req("to", graph.AttrInt)}
	castLikeAttrs := []AttrSpec{defInt("saturate", 1)}
	shapeAttrs := []AttrSpec{opt("end", graph.AttrInt), defInt("start", 0)}
	constOfShapeAttrs := []AttrSpec{opt("value", graph.AttrTensor)}
	attentionAttrs := []AttrSpec{defInt("is_causal", 0), opt("kv_num_heads", graph.AttrInt),
		opt("q_num_heads", graph.AttrInt), defInt("qk_matmul_output_mode", 0), opt("scale", graph.AttrFloat),
		defFloat("softcap", 0), opt("softmax_precision", graph.AttrInt)}

	var out []*Schema
	// Opset 18 (ONNX 1.13).
	out = append(out,
		schema("BitwiseAnd", 18, 2, 2, 1, 1),
		schema("BitwiseNot", 18, 1, 1, 1, 1),
		schema("BitwiseOr", 18, 2, 2, 1, 1),
		schema("BitwiseXor", 18, 2, 2, 1, 1),
		schema("CenterCropPad", 18, 2, 2, 1, 1, opt("axes", graph.AttrInts)),
		schema("Col2Im", 18, 3, 3, 1, 1, opt("dilations", graph.AttrInts), opt("pads", graph.AttrInts),
			opt("strides", graph.AttrInts)),
		schema("GroupNormalization", 18, 3, 3, 1, 1, defFloat("epsilon", 1e-5), req("num_groups", graph.AttrInt)),
		schema("LpPool", 18, 1, 1, 1, 1, defString("auto_pad", "NOTSET"), defInt("ceil_mode", 0),
			opt("dilations", graph.AttrInts), req("kernel_shape", graph.AttrInts), defInt("p", 2),
			opt("pads", graph.AttrInts), opt("strides", graph.AttrInts)),
		schema("Mish", 18, 1, 1, 1, 1),
		schema("OptionalGetElement", 18, 1, 1, 1, 1),
		schema("OptionalHasElement", 18, 0, 1, 1, 1),
		schema("Pad", 18, 2, 4, 1, 1, padAttrs...),
		schema("Resize", 18, 1, 4, 1, 1, resizeAttrs...),
		schema("ScatterElements", 18, 3, 3, 1, 1, defInt("axis", 0), defString("reduction", "none")),
		schema("ScatterND", 18, 3, 3, 1, 1, defString("reduction", "none")),
		schema("Split", 18, 1, 2, 1, -1, defInt("axis", 0), opt("num_outputs", graph.AttrInt)),
	)
	for _, name := range []string{"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
		"ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"} {
		out = append(out, schema(name, 18, 1, 2, 1, 1, reduceAttrs...))
	}
	// Opset 19 (ONNX 1.14).
	out = append(out,
		schema("AveragePool", 19, 1, 1, 1, 1, defString("auto_pad", "NOTSET"), defInt("ceil_mode", 0),
			defInt("count_include_pad", 0), opt("dilations", graph.AttrInts), req("kernel_shape", graph.AttrInts),
			opt("pads", graph.AttrInts), opt("strides", graph.AttrInts)),
		schema("Cast", 19, 1, 1, 1, 1, castAttrs...),
		schema("CastLike", 19, 2, 2, 1, 1, castLikeAttrs...),
		schema("Constant", 19, 0, 0, 1, 1, constantAttrs...),
		schema("DeformConv", 19, 3, 5, 1, 1, opt("dilations", graph.AttrInts), defInt("group", 1),
			opt("kernel_shape", graph.AttrInts), defInt("offset_group", 1), opt("pads", graph.AttrInts),
			opt("strides", graph.AttrInts)),
		schema("DequantizeLinear", 19, 2, 3, 1, 1, defInt("axis", 1)),
		schema("Equal", 19, 2, 2, 1, 1),
		schema("Identity", 19, 1, 1, 1, 1),
		schema("If", 19, 1, 1, 1, -1, ifAttrs...),
		optionalInputs(schema("Loop", 19, 2, -1, 1, -1, loopAttrs...), 0, 1),
		schema("Pad", 19, 2, 4, 1, 1, padAttrs...),
		schema("QuantizeLinear", 19, 2, 3, 1, 1, defInt("axis", 1), defInt("saturate", 1)),
		schema("Reshape", 19, 2, 2, 1, 1, defInt("allowzero", 0)),
		schema("Resize", 19, 1, 4, 1, 1, resizeAttrs...),
		schema("Scan", 19, 1, -1, 1, -1, scanAttrs...),
		schema("Shape", 19, 1, 1, 1, 1, shapeAttrs...),
		schema("Size", 19, 1, 1, 1, 1),
	)
	// Opset 20 (ONNX 1.15).
	out = append(out,
		schema("AffineGrid", 20, 2, 2, 1, 1, defInt("align_corners", 0)),
		schema("ConstantOfShape", 20, 1, 1, 1, 1, constOfShapeAttrs...),
		schema("DFT", 20, 1, 3, 1, 1, defInt("inverse", 0), defInt("onesided", 0)),
		schema("Gelu", 20, 1, 1, 1, 1, defString("approximate", "none")),
		schema("GridSample", 20, 2, 2, 1, 1, defInt("align_corners", 0), defString("mode", "linear"),
			defString("padding_mode", "zeros")),
		schema("ImageDecoder", 20, 1, 1, 1, 1, defString("pixel_format", "RGB")),
		schema("IsInf", 20, 1, 1, 1, 1, defInt("detect_negative", 1), defInt("detect_positive", 1)),
		schema("IsNaN", 20, 1, 1, 1, 1),
		schema("ReduceMax", 20, 1, 2, 1, 1, reduceAttrs...),
		schema("ReduceMin", 20, 1, 2, 1, 1, reduceAttrs...),
		schema("RegexFullMatch", 20, 1, 1, 1, 1, opt("pattern", graph.AttrString)),
		schema("StringConcat", 20, 2, 2, 1, 1),
		schema("StringSplit", 20, 1, 1, 2, 2, opt("delimiter", graph.AttrString), opt("maxsplit", graph.AttrInt)),
	)
	// Opset 21 (ONNX 1.16): int4/uint4 support and blocked quantization.
	out = append(out,
		schema("Cast", 21, 1, 1, 1, 1, castAttrs...),
		schema("CastLike", 21, 2, 2, 1, 1, castLikeAttrs...),
		schema("Constant", 21, 0, 0, 1, 1, constantAttrs...),
		schema("ConstantOfShape", 21, 1, 1, 1, 1, constOfShapeAttrs...),
		schema("DequantizeLinear", 21, 2, 3, 1, 1, defInt("axis", 1), defInt("block_size", 0)),
		schema("Flatten", 21, 1, 1, 1, 1, defInt("axis", 1)),
		schema("GroupNormalization", 21, 3, 3, 1, 1, defFloat("epsilon", 1e-5), req("num_groups", graph.AttrInt),
			defInt("stash_type", 1)),
		schema("Identity", 21, 1, 1, 1, 1),
		schema("If", 21, 1, 1, 1, -1, ifAttrs...),
		optionalInputs(schema("Loop", 21, 2, -1, 1, -1, loopAttrs...), 0, 1),
		schema("Pad", 21, 2, 4, 1, 1, padAttrs...),
		schema("QLinearMatMul", 21, 8, 8, 1, 1),
		schema("QuantizeLinear", 21, 2, 3, 1, 1, defInt("axis", 1), defInt("block_size", 0),
			defInt("output_dtype", 0), defInt("saturate", 1)),
		schema("Reshape", 21, 2, 2, 1, 1, defInt("allowzero", 0)),
		schema("Scan", 21, 1, -1, 1, -1, scanAttrs...),
		schema("Shape", 21, 1, 1, 1, 1, shapeAttrs...),
		schema("Size", 21, 1, 1, 1, 1),
		schema("Squeeze", 21, 1, 2, 1, 1),
		schema("Transpose", 21, 1, 1, 1, 1, opt("perm", graph.AttrInts)),
		schema("Unsqueeze", 21, 2, 2, 1, 1),
	)
	// Opset 23 (ONNX 1.18): the transformer ops; float4e2m1 in typeWidened.
	out = append(out,
		schema("Attention", 23, 3, 6, 1, 4, attentionAttrs...),
		schema("DequantizeLinear", 23, 2, 3, 1, 1, defInt("axis", 1), defInt("block_size", 0), defInt("output_dtype", 0)),
		schema("QuantizeLinear", 23, 2, 3, 1, 1, defInt("axis", 1), defInt("block_size", 0),
			defInt("output_dtype", 0), defInt("precision", 0), defInt("saturate", 1)),
		schema("RMSNormalization", 23, 2, 2, 1, 1, defInt("axis", -1), defFloat("epsilon", 1e-5), defInt("stash_type", 1)),
		schema("RotaryEmbedding", 23, 3, 4, 1, 1, defInt("interleaved", 0), opt("num_heads", graph.AttrInt),
			defInt("rotary_embedding_dim", 0)),
	)
	// Opset 24 (ONNX 1.19): Attention's nonpad_kv_seqlen input, Cast's
	// round_mode for float8e8m0, TensorScatter; float8e8m0 and bfloat16
	// in typeWidened. Swish-24 is registered with the activations.
	out = append(out,
		schema("Attention", 24, 3, 7, 1, 4, attentionAttrs...),
		schema("Cast", 24, 1, 1, 1, 1, append([]AttrSpec{defString("round_mode", "up")}, castAttrs...)...),
		schema("CastLike", 24, 2, 2, 1, 1, append([]AttrSpec{defString("round_mode", "up")}, castLikeAttrs...)...),
		schema("TensorScatter", 24, 2, 3, 1, 1, defInt("axis", -2), defString("mode", "linear")),
	)
	// ai.onnx.ml opset 4 (ONNX 1.15).
	labelEncoder := schema("LabelEncoder", 4, 1, 1, 1, 1,
		defFloat("default_float", negZero), defInt("default_int64", -1), defString("default_string", "_Unused"),
		opt("default_tensor", graph.AttrTensor), opt("keys_floats", graph.AttrFloats),
		opt("keys_int64s", graph.AttrInts), opt("keys_strings", graph.AttrStrings),
		opt("keys_tensor", graph.AttrTensor), opt("values_floats", graph.AttrFloats),
		opt("values_int64s", graph.AttrInts), opt("values_strings", graph.AttrStrings),
		opt("values_tensor", graph.AttrTensor))
	labelEncoder.Domain = DomainML
	return append(out, labelEncoder)
}

// typeWidened lists, by opset, the ai.onnx ops of opsets 22 to 24 whose new
// version only widened the accepted types (bfloat16 at 22; float4e2m1 at
// 23; float8e8m0 at 24, and bfloat16 for SplitToSequence and TopK): each
// takes its previous version's inputs, outputs and attributes.
var typeWidened = []struct {
	since int64
	ops   []string
}{
	{22, []string{"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Bernoulli", "Conv",
		"ConvTranspose", "Cos", "Cosh", "DeformConv", "Det", "Dropout", "Elu", "EyeLike", "GRU",
		"GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GridSample", "HardSigmoid", "HardSwish",
		"InstanceNormalization", "LSTM", "LpNormalization", "LpPool", "MaxPool", "MaxRoiPool", "MaxUnpool",
		"Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN", "RandomNormal", "RandomNormalLike",
		"RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin", "Sinh", "Softplus",
		"Softsign", "Tan", "ThresholdedRelu"}},
	{23, []string{"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop",
		"Pad", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"}},
	{24, []string{"Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity", "If", "Loop",
		"Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "SplitToSequence", "Squeeze", "TopK",
		"Transpose", "Unsqueeze"}},
}

// registerWidened registers the versions typeWidened lists, each a copy of
// the op's version before it, opset by opset (a copy may copy the previous
// opset's copy). The versions they copy must be registered.
func registerWidened() {
	for _, w := range typeWidened {
		var out []*Schema
		for _, name := range w.ops {
			prev := Lookup(graph.DefaultDomain, name, w.since-1)
			if prev == nil {
				panic(fmt.Sprintf("ops: %s has no version before %d", name, w.since))
			}
			s := *prev
			s.Since, s.Infer, s.Deprecated = w.since, nil, false
			out = append(out, &s)
		}
		Register(out...)
	}
}
