package hostfallback

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// The ai.onnx.ml ops on maps: ZipMap, CastMap and DictVectorizer.

func init() {
	RegisterDomain(ops.DomainML, "ZipMap", zipMapKernel)
	RegisterDomain(ops.DomainML, "CastMap", castMapKernel)
	RegisterDomain(ops.DomainML, "DictVectorizer", dictVectorizerKernel)
}

// zipMapKernel is ZipMap: each row of the float scores [N, C] becomes a map
// from the class labels to the row's values; the output is the sequence of
// the N maps.
func zipMapKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if x.DType != graph.Float || x.Rank() < 1 || x.Rank() > 2 {
		return c.Errorf("input %s%v, want float [N, C] or [C]", x.DType, x.Shape)
	}
	var keys *graph.Tensor
	p := ops.Params[ops.ZipMapParams](c.Node, c.Opset)
	if s := p.ClasslabelsStrings; s != nil {
		keys = &graph.Tensor{DType: graph.String, Shape: []int64{int64(len(s))}, Strings: s}
	} else if ints := p.ClasslabelsInt64s; ints != nil {
		if keys, err = graph.FromSlice(graph.Int64, []int64{int64(len(ints))}, ints); err != nil {
			return c.Errorf("%w", err)
		}
	} else {
		return c.Errorf("no class labels")
	}
	cols := x.Shape[x.Rank()-1]
	if cols != keys.NumElements() {
		return c.Errorf("%d labels for %d columns", keys.NumElements(), cols)
	}
	rows := int64(1)
	if x.Rank() == 2 {
		rows = x.Shape[0]
	}
	mt := &graph.Type{Kind: graph.MapKind, Elem: keys.DType, Inner: graph.TensorType(graph.Float, nil)}
	seq := &graph.Sequence{Elem: mt, Items: make([]graph.Value, rows)}
	v := graph.View[float32](x)
	for r := range rows {
		vals, err := graph.FromSlice(graph.Float, []int64{cols}, v[r*cols:(r+1)*cols])
		if err != nil {
			return c.Errorf("%w", err)
		}
		seq.Items[r] = &graph.Map{Keys: keys, Values: vals}
	}
	c.Out[0] = seq
	return nil
}

// mapInput returns input 0, a map whose values are a tensor.
func mapInput(c *Call) (*graph.Map, *graph.Tensor, error) {
	if len(c.In) == 0 {
		return nil, nil, c.Errorf("input missing")
	}
	m, ok := c.In[0].(*graph.Map)
	if !ok || m.Keys == nil {
		return nil, nil, c.Errorf("input is not a map")
	}
	vals, ok := m.Values.(*graph.Tensor)
	if !ok || vals.NumElements() != m.Keys.NumElements() {
		return nil, nil, c.Errorf("map values are not a tensor of one value per key")
	}
	return m, vals, nil
}

// castMapKernel is CastMap: the values of an int64-keyed map, in key
// order, as a [1, n] tensor of float32, strings or int64 (cast_to). The
// SPARSE form places value k at position k of [1, max_map] instead,
// leaving zeros (empty strings) elsewhere. Strings convert to numbers by
// parsing, floats to int64 by truncation.
func castMapKernel(c *Call) error {
	m, vals, err := mapInput(c)
	if err != nil {
		return err
	}
	keys, err := indexValues(c, m.Keys)
	if err != nil {
		return err
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	var dt graph.DType
	p := ops.Params[ops.CastMapParams](c.Node, c.Opset)
	switch to := p.CastTo; to {
	case "TO_FLOAT":
		dt = graph.Float
	case "TO_STRING":
		dt = graph.String
	case "TO_INT64":
		dt = graph.Int64
	default:
		return c.Errorf("cast_to %q", to)
	}
	width := int64(len(keys))
	sparse := false
	switch form := p.MapForm; form {
	case "DENSE":
	case "SPARSE":
		sparse, width = true, p.MaxMap
		if width < 0 {
			return c.Errorf("max_map %d", width)
		}
	default:
		return c.Errorf("map_form %q", form)
	}
	src := graph.NewTensor(dt, []int64{int64(len(keys))})
	if err := castTensor(c.Threads, src, vals, castOptions{saturate: true}); err != nil {
		return c.Errorf("casting the values: %w", err)
	}
	y := c.Output(0, dt, []int64{1, width})
	for pos, i := range order {
		at := int64(pos)
		if sparse {
			at = keys[i]
			if at < 0 || at >= width {
				return c.Errorf("key %d outside max_map %d", keys[i], width)
			}
		}
		if dt == graph.String {
			y.Strings[at] = src.Strings[i]
			continue
		}
		es := int64(dt.Size())
		copy(y.Data[at*es:(at+1)*es], src.Data[int64(i)*es:int64(i+1)*es])
	}
	return nil
}

// dictVectorizerKernel is DictVectorizer: the map's values at the keys of
// the vocabulary (int64_vocabulary or string_vocabulary), zero where the
// map lacks the key, as a [1, len(vocabulary)] tensor of the values' type.
func dictVectorizerKernel(c *Call) error {
	m, vals, err := mapInput(c)
	if err != nil {
		return err
	}
	var vocab []string
	p := ops.Params[ops.DictVectorizerParams](c.Node, c.Opset)
	if s := p.StringVocabulary; s != nil {
		vocab = s
	} else {
		for _, k := range p.Int64Vocabulary {
			vocab = append(vocab, strconv.FormatInt(k, 10))
		}
	}
	var keys []string
	if m.Keys.DType == graph.String {
		keys = m.Keys.Strings
	} else {
		ints, err := indexValues(c, m.Keys)
		if err != nil {
			return err
		}
		for _, k := range ints {
			keys = append(keys, strconv.FormatInt(k, 10))
		}
	}
	pos := make(map[string]int, len(keys))
	for i, k := range keys {
		pos[k] = i
	}
	y := c.Output(0, vals.DType, []int64{1, int64(len(vocab))})
	es := int64(vals.DType.Size())
	for j, k := range vocab {
		i, ok := pos[k]
		switch {
		case !ok:
		case vals.DType == graph.String:
			y.Strings[j] = vals.Strings[i]
		default:
			copy(y.Data[int64(j)*es:int64(j+1)*es], vals.Data[int64(i)*es:int64(i+1)*es])
		}
	}
	return nil
}
