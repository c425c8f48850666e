package planner

import (
	"maps"
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// foldBatchNorms folds each BatchNormalization in inference form whose
// only input read at run time is the output of a float32 Conv with
// constant weights and optional constant bias, read by nothing else, into
// that Conv: with a = scale / sqrt(var + epsilon) per output channel, the
// Conv's weights become W·a and its bias (B − mean)·a + bias, new
// initializers of g under fresh names (the model's tensors are never
// modified). The Conv, now writing the normalization's output, takes the
// Conv's place and the normalization is marked gone, so that the
// activation fusion after it sees the Conv. It returns the number of
// nodes removed.
func foldBatchNorms(pm *graph.Model, g *graph.Graph, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	// constant returns the float32 initializer name of exactly n elements
	// fixed at plan time, or nil.
	constant := func(name string, n int64) []float32 {
		t := g.Initializers[name]
		if name == "" || t == nil || overridable[name] || t.DType != graph.Float || t.NumElements() != n {
			return nil
		}
		return graph.View[float32](t)
	}
	var names namer
	fresh := func(base string) string {
		if names == nil {
			names = newNamer(g)
		}
		return names.fresh(base)
	}
	opset := pm.Opset("")
	removed := 0
	for i, conv := range g.Nodes {
		if gone[i] || conv.Domain != "" || conv.OpType != "Conv" || len(conv.Inputs) < 2 || len(conv.Outputs) != 1 || uses[conv.Outputs[0]] != 1 {
			continue
		}
		w := g.Initializers[conv.Inputs[1]]
		if w == nil || overridable[conv.Inputs[1]] || w.DType != graph.Float || w.Rank() < 3 || w.NumElements() == 0 {
			continue
		}
		channels := w.Shape[0]
		var bias []float32
		if len(conv.Inputs) > 2 && conv.Inputs[2] != "" {
			if bias = constant(conv.Inputs[2], channels); bias == nil {
				continue
			}
		}
		j := consumers[conv.Outputs[0]][0]
		bn := g.Nodes[j]
		if gone[j] || bn.Domain != "" || bn.OpType != "BatchNormalization" || len(bn.Inputs) != 5 || bn.Inputs[0] != conv.Outputs[0] ||
			len(bn.Outputs) == 0 || bn.Outputs[0] == "" || ops.Params[ops.BatchNormalizationParams](bn, opset).TrainingMode != 0 ||
			opset < 9 && ops.Params[ops.BatchNormalizationParams](bn, opset).Spatial == 0 {
			continue
		}
		extra := false
		for _, o := range bn.Outputs[1:] {
			extra = extra || o != ""
		}
		var params [4][]float32
		for k := range params {
			params[k] = constant(bn.Inputs[k+1], channels)
			extra = extra || params[k] == nil
		}
		if extra {
			continue
		}
		scale, shift, mean, variance := params[0], params[1], params[2], params[3]
		eps := float64(ops.Params[ops.BatchNormalizationParams](bn, opset).Epsilon)
		nw := graph.NewTensor(graph.Float, w.Shape)
		nb := graph.NewTensor(graph.Float, []int64{channels})
		ws, nws, nbs := graph.View[float32](w), graph.View[float32](nw), graph.View[float32](nb)
		per := len(ws) / int(channels)
		for m := range int(channels) {
			a := float64(scale[m]) / math.Sqrt(float64(variance[m])+eps)
			for k := m * per; k < (m+1)*per; k++ {
				nws[k] = float32(float64(ws[k]) * a)
			}
			b := 0.0
			if bias != nil {
				b = float64(bias[m])
			}
			nbs[m] = float32((b-float64(mean[m]))*a + float64(shift[m]))
		}
		wName, bName := fresh(conv.Inputs[1]+"_bn"), fresh(bn.Outputs[0]+"_bias")
		g.Initializers[wName], g.Initializers[bName] = nw, nb
		folded := *conv
		folded.Inputs = []string{conv.Inputs[0], wName, bName}
		folded.Outputs = bn.Outputs[:1]
		g.Nodes[i] = &folded
		gone[j] = true
		removed++
	}
	return removed
}

// fuseBatchNormActivations replaces each float32 BatchNormalization in
// inference form (one output) whose output only an activation that a
// FusedConv could take reads (the pre-activation BatchNormalization and
// Relu of DenseNet's layers, which follow a Concat, not a Conv) by one
// FusedBatchNorm of ops.FusedDomain at the normalization's place, writing
// the activation's output, where the device that runs the normalization
// runs the fused node too. It returns the number of nodes removed.
func fuseBatchNormActivations(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	removed := 0
	for i, bn := range g.Nodes {
		if gone[i] || bn.Domain != "" || bn.OpType != "BatchNormalization" || len(bn.Inputs) != 5 || len(bn.Outputs) != 1 || uses[bn.Outputs[0]] != 1 {
			continue
		}
		opset := pm.OpsetOf(bn)
		p := ops.Params[ops.BatchNormalizationParams](bn, opset)
		if p.TrainingMode != 0 || opset < 9 {
			continue
		}
		if t := g.TypeOf(bn.Inputs[0]); t == nil || t.Kind != graph.TensorKind || t.Elem != graph.Float {
			continue
		}
		j := consumers[bn.Outputs[0]][0]
		a := g.Nodes[j]
		if gone[j] || !fusableActivation(a) || len(a.Inputs) == 0 || a.Inputs[0] != bn.Outputs[0] || len(a.Outputs) != 1 {
			continue
		}
		alpha, beta, ok := activationParams(g, a, pm.OpsetOf(a), overridable)
		if !ok {
			continue
		}
		f := &graph.Node{Name: bn.Name, OpType: "FusedBatchNorm", Domain: ops.FusedDomain, Inputs: bn.Inputs, Outputs: a.Outputs,
			Attrs: map[string]*graph.Attribute{
				"epsilon":    {Name: "epsilon", Type: graph.AttrFloat, F: p.Epsilon},
				"activation": {Name: "activation", Type: graph.AttrString, S: []byte(a.OpType)},
				"alpha":      {Name: "alpha", Type: graph.AttrFloat, F: alpha},
				"beta":       {Name: "beta", Type: graph.AttrFloat, F: beta},
			},
			Doc: bn.Doc, Metadata: bn.Metadata, DeviceConfigs: bn.DeviceConfigs, Index: bn.Index}
		if !sameDevice(pm, g, bn, f, devices) || ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[i] = f
		gone[j] = true
		removed++
	}
	return removed
}

// fuseNormConvs replaces each pointwise convolution (Conv or FusedConv
// without Sum: a 1×…×1 kernel, unit strides, no padding) whose input X
// only a FusedBatchNorm writes and only it reads by one NormConv of
// ops.FusedDomain at the convolution's place, reading the normalization's
// input and parameters (DenseNet's BatchNormalization, Relu and 1×1
// convolution: the normalized features, as large as the Concat before
// them, are then never written out), where the devices that run the two
// run the fused node too. It returns the number of nodes removed.
func fuseNormConvs(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, gone map[int]bool) int {
	removed := 0
	for i, bn := range g.Nodes {
		if gone[i] || bn.Domain != ops.FusedDomain || bn.OpType != "FusedBatchNorm" || len(bn.Outputs) != 1 || uses[bn.Outputs[0]] != 1 {
			continue
		}
		j := consumers[bn.Outputs[0]][0]
		cv := g.Nodes[j]
		plain := cv.Domain == graph.DefaultDomain && cv.OpType == "Conv"
		if gone[j] || !plain && (cv.Domain != ops.FusedDomain || cv.OpType != "FusedConv") || len(cv.Inputs) < 2 || len(cv.Inputs) > 3 ||
			cv.Inputs[0] != bn.Outputs[0] || cv.Inputs[1] == bn.Outputs[0] || !pointwiseConv(g, cv, pm.OpsetOf(cv)) {
			continue
		}
		bias := ""
		if len(cv.Inputs) == 3 {
			bias = cv.Inputs[2]
		}
		attrs := maps.Clone(cv.Attrs)
		if attrs == nil {
			attrs = map[string]*graph.Attribute{}
		}
		for name, to := range map[string]string{"epsilon": "epsilon", "activation": "norm_activation", "alpha": "norm_alpha", "beta": "norm_beta"} {
			if a := bn.Attr(name); a != nil {
				c := *a
				c.Name = to
				attrs[to] = &c
			}
		}
		f := &graph.Node{Name: cv.Name, OpType: "NormConv", Domain: ops.FusedDomain, Inputs: append([]string{bn.Inputs[0], cv.Inputs[1], bias}, bn.Inputs[1:]...),
			Outputs: cv.Outputs, Attrs: attrs, Doc: cv.Doc, Metadata: cv.Metadata, DeviceConfigs: cv.DeviceConfigs, Index: cv.Index}
		if !sameDevice(pm, g, cv, f, devices) || !sameDevice(pm, g, bn, f, devices) || ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[j] = f
		gone[i] = true
		removed++
	}
	return removed
}

// pointwiseConv reports whether Conv or FusedConv n is a 1×…×1 convolution
// with unit strides and no padding, its weights' shape known.
func pointwiseConv(g *graph.Graph, n *graph.Node, opset int64) bool {
	t := g.TypeOf(n.Inputs[1])
	if t == nil || t.Kind != graph.TensorKind || len(t.Shape) < 3 {
		return false
	}
	r := len(t.Shape) - 2
	kernel := make([]int64, r)
	for d := range r {
		if !t.Shape[d+2].Known() {
			return false
		}
		kernel[d] = t.Shape[d+2].Value
	}
	w := ops.WindowOf(n, opset)
	if w == nil {
		return false
	}
	for d, k := range w.KernelFor(kernel) {
		if k != 1 || w.StridesFor(r)[d] != 1 || w.PadsFor(r)[d] != 0 || w.PadsFor(r)[r+d] != 0 {
			return false
		}
	}
	return len(w.KernelFor(kernel)) == r
}
