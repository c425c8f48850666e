package hostfallback

import (
	"fmt"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

func init() {
	RegisterChecked("BatchNormalization", batchNormKernel, onFloats)
	RegisterChecked("InstanceNormalization", instanceNormKernel, onFloats)
	RegisterChecked("LayerNormalization", layerNormKernel, layerNormSupport)
	RegisterChecked("GroupNormalization", groupNormKernel, onFloats)
	RegisterDomainChecked(ops.FusedDomain, "SkipLayerNormalization", skipLayerNormKernel, layerNormSupport)
}

// layerNormSupport is what LayerNormalization (also in its fused form)
// accepts: inputs and stash_type of the f32Family.
var layerNormSupport = Support{In: onFloats.In, Check: func(q planner.Query) string {
	if stash := graph.DType(ops.NormalizationOf(q.Node, q.Opset).StashType); !f32Family(stash) {
		return fmt.Sprintf("stash_type %s (the CPU kernel takes %s)", stash, floats)
	}
	return ""
}}

// normFloats returns input i, a tensor of the f32Family (see onFloats), as float32s,
// checking its element count when want ≥ 0.
func normFloats(c *Call, i int, name string, want int) ([]float32, error) {
	t := c.Tensor(i)
	if t == nil {
		return nil, c.Errorf("input %s is required", name)
	}
	if want >= 0 && t.NumElements() != int64(want) {
		return nil, c.Errorf("%s%v must hold %d values", name, t.Shape, want)
	}
	return f32Data(t), nil
}

// normStats computes the mean and 1/sqrt(variance + eps) (population
// variance, accumulated in float64) of each of the len(mean) consecutive
// runs of n values of x.
func normStats(threads *Threads, x []float32, n int, eps float64, mean, inv []float64) {
	threads.For(len(mean), max(1, 8192/max(n, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			mean[r], inv[r] = rowStats(x[r*n:(r+1)*n], eps)
		}
	})
}

// rowStats returns the mean and 1/sqrt(variance + eps) of row (see
// normStats): the mean first, then the squared deviations from it.
func rowStats(row []float32, eps float64) (mean, inv float64) {
	n := float64(len(row))
	m := sumF64(row) / n
	return m, 1 / math.Sqrt(rowSqDev(row, m)/n+eps)
}

// rowSqDevGo is the portable rowSqDev, with four partial sums.
func rowSqDevGo(row []float32, m float64) float64 {
	var q [4]float64
	i := 0
	for ; i+4 <= len(row); i += 4 {
		r := (*[4]float32)(row[i:])
		d0, d1, d2, d3 := float64(r[0])-m, float64(r[1])-m, float64(r[2])-m, float64(r[3])-m
		q[0] += d0 * d0
		q[1] += d1 * d1
		q[2] += d2 * d2
		q[3] += d3 * d3
	}
	for ; i < len(row); i++ {
		d := float64(row[i]) - m
		q[0] += d * d
	}
	return q[0] + q[1] + q[2] + q[3]
}

// normRowGo is the portable normRow.
func normRowGo(y, x, scale, bias []float32, m, s float32) {
	x, scale = x[:len(y)], scale[:len(y)]
	if bias == nil {
		for i, v := range x {
			y[i] = (v - m) * s * scale[i]
		}
		return
	}
	bias = bias[:len(y)]
	for i, v := range x {
		y[i] = (v-m)*s*scale[i] + bias[i]
	}
}

// normApply sets y = (x − mean)·inv·scale + bias over runs of n values,
// with scale and bias per run divided into parts of n/parts values each
// (scaleAt(run, part) picks their index), in parallel over the runs.
func normApply(threads *Threads, x, y []float32, n, parts int, mean, inv []float64, scale, bias []float32, scaleAt func(run, part int) int) {
	size := n / max(parts, 1)
	threads.For(len(mean), max(1, 8192/max(n, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for p := range parts {
				k := scaleAt(r, p)
				a := inv[r] * float64(scale[k])
				b := -mean[r] * a
				if bias != nil {
					b += float64(bias[k])
				}
				fa, fb := float32(a), float32(b)
				dst := y[r*n+p*size : r*n+(p+1)*size]
				for i, v := range x[r*n+p*size : r*n+(p+1)*size] {
					dst[i] = v*fa + fb
				}
			}
		}
	})
}

// batchNormKernel is ONNX BatchNormalization. In inference (the default)
// Y = (X − mean)/sqrt(var + ε)·scale + B with the given statistics. In
// training (training_mode from opset 14; before, when the running
// statistics outputs are asked for and, before opset 7, is_test is 0) the
// batch statistics are used and the running ones updated with momentum.
// The parameters hold one value per channel, or, for the non-spatial
// mode of opsets 1–8, one per activation (C·D1·…·Dn).
// batchNormApply sets each run r of inner values of y to those of x
// times a + b, with a = scale/√(variance+eps) and b = bias − mean·a of
// feature r mod features (in float64, then rounded), then applies act
// (nil: none) to it.
func batchNormApply(threads *Threads, x, y []float32, features, inner int, scale, bias []float32, mean, variance []float64, eps float64, act *convAct) {
	threads.For(len(y)/max(inner, 1), max(1, 8192/max(inner, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			f := r % features
			a := float64(scale[f]) / math.Sqrt(variance[f]+eps)
			affineF32(y[r*inner:(r+1)*inner], x[r*inner:(r+1)*inner], float32(a), float32(float64(bias[f])-mean[f]*a))
			act.apply(y, r*inner, 1, inner, inner)
		}
	})
}

// fusedBatchNormKernel is FusedBatchNorm: BatchNormalization in
// inference mode, then the node's activation on each channel's values
// while they are in cache.
func fusedBatchNormKernel(c *Call) error {
	act, err := fusedActivation(c)
	if err != nil {
		return err
	}
	x := c.Tensor(0)
	if x == nil || x.Rank() < 2 {
		return c.Errorf("X must have rank ≥ 2")
	}
	ch := int(x.Shape[1])
	var params [4][]float32
	for i, name := range []string{"scale", "B", "mean", "var"} {
		if params[i], err = normFloats(c, i+1, name, ch); err != nil {
			return err
		}
	}
	m, vr := make([]float64, ch), make([]float64, ch)
	for f := range ch {
		m[f], vr[f] = float64(params[2][f]), float64(params[3][f])
	}
	y := c.OutputUninit(0, x.DType, x.Shape)
	out := f32Target(y)
	eps := float64(ops.Params[ops.FusedBatchNormParams](c.Node, c.Opset).Epsilon)
	batchNormApply(c.Threads, f32Data(x), out, ch, int(graph.NumElements(x.Shape[2:])), params[0], params[1], m, vr, eps, act)
	f32Commit(y, out)
	return nil
}

func batchNormKernel(c *Call) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	if x.Rank() < 2 {
		return c.Errorf("X%v must have rank ≥ 2", x.Shape)
	}
	n, ch := int(x.Shape[0]), int(x.Shape[1])
	inner := int(graph.NumElements(x.Shape[2:]))
	features := ch
	p := ops.Params[ops.BatchNormalizationParams](c.Node, c.Opset)
	if c.Opset < 9 && p.Spatial == 0 {
		features, inner = ch*inner, 1
	}
	var params [4][]float32
	for i, name := range []string{"scale", "B", "mean", "var"} {
		v, err := normFloats(c, i+1, name, features)
		if err != nil {
			return err
		}
		params[i] = v
	}
	scale, bias, mean, variance := params[0], params[1], params[2], params[3]
	eps := float64(p.Epsilon)
	momentum := float64(p.Momentum)
	wantsStats := outputWanted(c, 1) || outputWanted(c, 2) || (c.Opset < 14 && (outputWanted(c, 3) || outputWanted(c, 4)))
	training := p.TrainingMode != 0
	if c.Opset < 14 {
		training = wantsStats && (c.Opset >= 7 || p.IsTest == 0)
	}
	if wantsStats && !training {
		return c.Errorf("statistics outputs need training mode")
	}
	y := c.OutputUninit(0, x.DType, x.Shape)
	out := f32Target(y)
	xv := f32Data(x)
	m, vr := make([]float64, features), make([]float64, features)
	if training {
		batchStats(c.Threads, xv, n, features, inner, m, vr)
	} else {
		for f := range features {
			m[f], vr[f] = float64(mean[f]), float64(variance[f])
		}
	}
	batchNormApply(c.Threads, xv, out, features, inner, scale, bias, m, vr, eps, nil)
	f32Commit(y, out)
	if !training {
		return nil
	}
	batch := [2][]float64{m, vr}
	for k, running := range [][]float32{mean, variance} {
		if !outputWanted(c, k+1) {
			continue
		}
		src := c.Tensor(3 + k)
		t := c.Output(k+1, src.DType, src.Shape)
		vals := f32Target(t)
		for f := range features {
			vals[f] = float32(float64(running[f])*momentum + batch[k][f]*(1-momentum))
		}
		f32Commit(t, vals)
	}
	// saved_mean and saved_var of opsets before 14: the batch statistics.
	for k := range 2 {
		if c.Opset >= 14 || !outputWanted(c, k+3) {
			continue
		}
		t := c.Output(k+3, x.DType, []int64{int64(features)})
		vals := f32Target(t)
		for f := range features {
			vals[f] = float32(batch[k][f])
		}
		f32Commit(t, vals)
	}
	return nil
}

// batchStats computes, for x viewed as [n, features, inner], each
// feature's mean and population variance over n and inner.
func batchStats(threads *Threads, x []float32, n, features, inner int, mean, variance []float64) {
	threads.For(features, 1, func(lo, hi int) {
		for f := lo; f < hi; f++ {
			var s float64
			for b := range n {
				for _, v := range x[(b*features+f)*inner : (b*features+f+1)*inner] {
					s += float64(v)
				}
			}
			mu := s / float64(n*inner)
			var q float64
			for b := range n {
				for _, v := range x[(b*features+f)*inner : (b*features+f+1)*inner] {
					d := float64(v) - mu
					q += d * d
				}
			}
			mean[f], variance[f] = mu, q/float64(n*inner)
		}
	})
}

// instanceNormKernel is ONNX InstanceNormalization: each (batch, channel)
// plane normalized by its own mean and variance, then scaled and shifted
// per channel.
func instanceNormKernel(c *Call) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input input is required")
	}
	if x.Rank() < 2 {
		return c.Errorf("input%v must have rank ≥ 2", x.Shape)
	}
	ch := int(x.Shape[1])
	scale, err := normFloats(c, 1, "scale", ch)
	if err != nil {
		return err
	}
	bias, err := normFloats(c, 2, "B", ch)
	if err != nil {
		return err
	}
	rows := int(x.Shape[0]) * ch
	size := int(graph.NumElements(x.Shape[2:]))
	y := c.Output(0, x.DType, x.Shape)
	out := f32Target(y)
	xv := f32Data(x)
	mean, inv := make([]float64, rows), make([]float64, rows)
	normStats(c.Threads, xv, size, float64(ops.Params[ops.InstanceNormalizationParams](c.Node, c.Opset).Epsilon), mean, inv)
	normApply(c.Threads, xv, out, size, 1, mean, inv, scale, bias, func(r, _ int) int { return r % ch })
	f32Commit(y, out)
	return nil
}

// groupNormKernel is ONNX GroupNormalization: the channels split into
// num_groups groups, each (batch, group) normalized over its channels and
// spatial positions, then scaled and shifted by scale and bias, which
// hold one value per channel (opset 21) or per group (opset 18; both
// forms are accepted by size).
func groupNormKernel(c *Call) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	if x.Rank() < 2 {
		return c.Errorf("X%v must have rank ≥ 2", x.Shape)
	}
	ch := int(x.Shape[1])
	p := ops.Params[ops.GroupNormalizationParams](c.Node, c.Opset)
	groups := int(p.NumGroups)
	if groups < 1 || ch%groups != 0 {
		return c.Errorf("num_groups %d must divide the %d channels", groups, ch)
	}
	scale, err := normFloats(c, 1, "scale", -1)
	if err != nil {
		return err
	}
	bias, err := normFloats(c, 2, "bias", len(scale))
	if err != nil {
		return err
	}
	perChannel := len(scale) == ch
	if !perChannel && len(scale) != groups {
		return c.Errorf("scale holds %d values, want %d (channels) or %d (groups)", len(scale), ch, groups)
	}
	y := c.Output(0, x.DType, x.Shape)
	if x.NumElements() == 0 {
		// Nothing to normalize: no statistics to allocate either, whose
		// count, batch × num_groups, need not be bounded by the data then.
		return nil
	}
	cg := ch / groups
	size := int(graph.NumElements(x.Shape[2:]))
	rows := int(x.Shape[0]) * groups
	out := f32Target(y)
	xv := f32Data(x)
	mean, inv := make([]float64, rows), make([]float64, rows)
	normStats(c.Threads, xv, cg*size, float64(p.Epsilon), mean, inv)
	normApply(c.Threads, xv, out, cg*size, cg, mean, inv, scale, bias, func(r, p int) int {
		if perChannel {
			return (r%groups)*cg + p
		}
		return r % groups
	})
	f32Commit(y, out)
	return nil
}

// layerNormKernel is ONNX LayerNormalization: X normalized over the axes
// from axis on, then scaled by Scale and shifted by B (both broadcast to
// those axes). The optional Mean and InvStdDev outputs have X's leading
// dimensions, ones after, and the stash_type element type.
func layerNormKernel(c *Call) error { return layerNorm(c, false) }

// skipLayerNormKernel is SkipLayerNormalization of ops.FusedDomain:
// LayerNormalization of X + Skip (inputs X, Skip, Scale, B), each row's
// sum made in the output's row and normalised there while in cache.
func skipLayerNormKernel(c *Call) error { return layerNorm(c, true) }

// layerNorm is LayerNormalization, of X + Skip (input 1, Scale and B
// following it) when skip is set.
func layerNorm(c *Call, skip bool) error {
	x := c.Tensor(0)
	if x == nil {
		return c.Errorf("input X is required")
	}
	first := 1
	var sv []float32
	if skip {
		s := c.Tensor(1)
		if s == nil || !slices.Equal(s.Shape, x.Shape) {
			return c.Errorf("input Skip must have X's shape %v", x.Shape)
		}
		sv, first = f32Data(s), 2
	}
	rank := x.Rank()
	p := ops.NormalizationOf(c.Node, c.Opset)
	axis := int(p.Axis)
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return c.Errorf("axis %d out of range for X%v", p.Axis, x.Shape)
	}
	stash := graph.DType(p.StashType)
	norm := x.Shape[axis:]
	size := int(graph.NumElements(norm))
	rows := int(graph.NumElements(x.Shape[:axis]))
	var affine [2][]float32
	for i, name := range []string{"Scale", "B"} {
		t := c.Tensor(first + i)
		if t == nil {
			if i == 0 {
				return c.Errorf("input Scale is required")
			}
			continue
		}
		v, ok := normBroadcast(f32Data(t), t.Shape, norm)
		if !ok {
			return c.Errorf("%s%v does not broadcast to %v", name, t.Shape, norm)
		}
		affine[i] = v
	}
	y := c.OutputUninit(0, x.DType, x.Shape)
	out := f32Target(y)
	xv := f32Data(x)
	mean, inv := make([]float64, rows), make([]float64, rows)
	eps := float64(p.Epsilon)
	scale, bias := affine[0], affine[1]
	// Each row's statistics and normalisation in one pass over the
	// rows, while the row is in cache.
	c.Threads.For(rows, max(1, 8192/max(size, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row, o := xv[r*size:(r+1)*size], out[r*size:(r+1)*size]
			if sv != nil {
				arithF32(o, row, sv[r*size:(r+1)*size], runVV, false)
				row = o
			}
			mean[r], inv[r] = rowStats(row, eps)
			normRow(o, row, scale, bias, float32(mean[r]), float32(inv[r]))
		}
	})
	f32Commit(y, out)
	statShape := append([]int64{}, x.Shape[:axis]...)
	for range rank - axis {
		statShape = append(statShape, 1)
	}
	for k, stat := range [][]float64{mean, inv} {
		if !outputWanted(c, k+1) {
			continue
		}
		t := c.Output(k+1, stash, statShape)
		vals := f32Target(t)
		for i, v := range stat {
			vals[i] = float32(v)
		}
		f32Commit(t, vals)
	}
	return nil
}

// normBroadcast returns v, of the given shape, broadcast (numpy rules,
// unidirectionally) to target; ok is false when it does not broadcast.
// A v already of target's size is returned as it is.
func normBroadcast(v []float32, shape, target []int64) ([]float32, bool) {
	if len(shape) > len(target) {
		for _, d := range shape[:len(shape)-len(target)] {
			if d != 1 {
				return nil, false
			}
		}
		shape = shape[len(shape)-len(target):]
	}
	off := len(target) - len(shape)
	same := true
	for i, d := range shape {
		if d != target[off+i] {
			if d != 1 {
				return nil, false
			}
			same = false
		}
	}
	if same && off == 0 {
		return v, true
	}
	n := int(graph.NumElements(target))
	out := make([]float32, n)
	idx := make([]int, len(target))
	sizes := make([]int, len(target))
	for i, d := range target {
		sizes[i] = int(d)
	}
	for i := range out {
		src := 0
		for d, s := range shape {
			src *= int(s)
			if s != 1 {
				src += idx[off+d]
			}
		}
		out[i] = v[src]
		convNextIndex(idx, sizes)
	}
	return out, true
}
