package hostfallback

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Scan: opset 8 (a leading batch axis, optional sequence lengths) and
// opset 9 on (no batch axis; per-input and per-output axes and
// directions).

func init() {
	Register("Scan", scanKernel)
}

// scanSpec is one Scan run over unbatched values.
type scanSpec struct {
	body             *graph.Graph
	inAxes, inDirs   []int64
	outAxes, outDirs []int64
	// nOut is the number of scan outputs.
	nOut int
}

// attrList checks the ints attribute name, v, for n values: zeros when
// absent.
func attrList(c *Call, name string, v []int64, n int) ([]int64, error) {
	if v == nil {
		return make([]int64, n), nil
	}
	if len(v) != n {
		return nil, c.Errorf("%s %v for %d values", name, v, n)
	}
	return v, nil
}

// squeezeSlice returns x[idx] along axis, the axis removed, as a new heap
// tensor.
func squeezeSlice(x *graph.Tensor, axis int, idx int64) *graph.Tensor {
	t := sliceAxis(x, axis, idx, idx+1)
	t.Shape = append(t.Shape[:axis], t.Shape[axis+1:]...)
	return t
}

// scanAxis maps axis from [-rank, rank) to [0, rank).
func scanAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// run iterates the body over the scan inputs' sequence axis and returns the
// final states and the stacked scan outputs.
func (s *scanSpec) run(c *Call, states []graph.Value, scans []*graph.Tensor) ([]graph.Value, []*graph.Tensor, error) {
	n, m := len(states), len(scans)
	axes := make([]int, m)
	length := int64(-1)
	for j, x := range scans {
		a, err := scanAxis(s.inAxes[j], x.Rank())
		if err != nil {
			return nil, nil, fmt.Errorf("scan input %d: %w", j, err)
		}
		axes[j] = a
		if length >= 0 && x.Shape[a] != length {
			return nil, nil, fmt.Errorf("scan input %d has %d steps, scan input 0 %d", j, x.Shape[a], length)
		}
		length = x.Shape[a]
	}
	if length < 0 {
		return nil, nil, fmt.Errorf("no scan inputs")
	}
	states = append([]graph.Value{}, states...)
	steps := make([][]*graph.Tensor, s.nOut)
	args := make([]graph.Value, n+m)
	for t := range length {
		copy(args, states)
		for j, x := range scans {
			idx := t
			if s.inDirs[j] != 0 {
				idx = length - 1 - t
			}
			args[n+j] = squeezeSlice(x, axes[j], idx)
		}
		outs, err := c.RunGraph(s.body, args)
		if err != nil {
			return nil, nil, fmt.Errorf("body, step %d: %w", t, err)
		}
		if len(outs) != n+s.nOut {
			return nil, nil, fmt.Errorf("body has %d outputs, want %d", len(outs), n+s.nOut)
		}
		copy(states, outs[:n])
		for k, v := range outs[n:] {
			y, ok := v.(*graph.Tensor)
			if !ok {
				return nil, nil, fmt.Errorf("scan output %d is a %v, not a tensor", k, valueTypeOf(v))
			}
			steps[k] = append(steps[k], y)
		}
	}
	stacked := make([]*graph.Tensor, s.nOut)
	for k, items := range steps {
		if s.outDirs[k] != 0 {
			rev := make([]*graph.Tensor, len(items))
			for i, y := range items {
				rev[len(items)-1-i] = y
			}
			items = rev
		}
		var elem *graph.Type
		if o := s.body.Outputs[n+k]; o != nil {
			elem = o.Type
		}
		rank := 0
		switch {
		case len(items) > 0:
			rank = items[0].Rank()
		case elem != nil:
			rank = len(elem.Shape)
		}
		a, err := scanAxis(s.outAxes[k], rank+1)
		if err != nil {
			return nil, nil, fmt.Errorf("scan output %d: %w", k, err)
		}
		if stacked[k], err = stackAxis(items, a, elem); err != nil {
			return nil, nil, fmt.Errorf("scan output %d: %w", k, err)
		}
	}
	return states, stacked, nil
}

func scanKernel(c *Call) error {
	body := c.Node.AttrGraph("body")
	if body == nil {
		return c.Errorf("body attribute missing")
	}
	m := int(ops.Params[ops.ScanParams](c.Node, c.Opset).NumScanInputs)
	first := 0
	if c.Opset < 9 {
		first = 1 // sequence_lens
	}
	nIn := len(c.In) - first
	if m <= 0 || m > nIn {
		return c.Errorf("num_scan_inputs %d for %d inputs", m, nIn)
	}
	n := nIn - m
	if len(c.Out) < n {
		return c.Errorf("%d outputs for %d states", len(c.Out), n)
	}
	spec := &scanSpec{body: body, nOut: len(c.Out) - n}
	if len(body.Outputs) != n+spec.nOut {
		return c.Errorf("body has %d outputs, want %d", len(body.Outputs), n+spec.nOut)
	}
	states := append([]graph.Value{}, c.In[first:first+n]...)
	scans := make([]*graph.Tensor, m)
	for j := range scans {
		x, err := inputTensor(c, first+n+j)
		if err != nil {
			return err
		}
		scans[j] = x
	}
	var err error
	p := ops.Params[ops.ScanParams](c.Node, c.Opset)
	if c.Opset < 9 {
		if spec.inDirs, err = attrList(c, "directions", p.Directions, m); err != nil {
			return err
		}
		spec.inAxes, spec.outAxes, spec.outDirs = make([]int64, m), make([]int64, spec.nOut), make([]int64, spec.nOut)
		return scanBatched(c, spec, states, scans)
	}
	if spec.inAxes, err = attrList(c, "scan_input_axes", p.ScanInputAxes, m); err != nil {
		return err
	}
	if spec.inDirs, err = attrList(c, "scan_input_directions", p.ScanInputDirections, m); err != nil {
		return err
	}
	if spec.outAxes, err = attrList(c, "scan_output_axes", p.ScanOutputAxes, spec.nOut); err != nil {
		return err
	}
	if spec.outDirs, err = attrList(c, "scan_output_directions", p.ScanOutputDirections, spec.nOut); err != nil {
		return err
	}
	finals, stacked, err := spec.run(c, states, scans)
	if err != nil {
		return c.Errorf("%w", err)
	}
	copy(c.Out, finals)
	for k, y := range stacked {
		c.Out[n+k] = y
	}
	return nil
}

// scanBatched is Scan-8: states and scan inputs carry a leading batch axis
// and the scan axis follows it; each batch entry runs on its own, over its
// sequence length when sequence_lens is given, and shorter scan outputs are
// padded with zeros.
func scanBatched(c *Call, spec *scanSpec, states []graph.Value, scans []*graph.Tensor) error {
	batch := int64(-1)
	check := func(what string, i int, v graph.Value) (*graph.Tensor, error) {
		t, ok := v.(*graph.Tensor)
		if !ok || t.Rank() == 0 {
			return nil, c.Errorf("%s %d must be a tensor with a batch axis, got %v", what, i, valueTypeOf(v))
		}
		if batch >= 0 && t.Shape[0] != batch {
			return nil, c.Errorf("%s %d has batch size %d, want %d", what, i, t.Shape[0], batch)
		}
		batch = t.Shape[0]
		return t, nil
	}
	stateTs := make([]*graph.Tensor, len(states))
	for i, v := range states {
		t, err := check("state", i, v)
		if err != nil {
			return err
		}
		stateTs[i] = t
	}
	for j, x := range scans {
		if _, err := check("scan input", j, x); err != nil {
			return err
		}
		if x.Rank() < 2 {
			return c.Errorf("scan input %d has rank %d, want a batch and a sequence axis", j, x.Rank())
		}
	}
	maxLen := scans[0].Shape[1]
	lens := make([]int64, batch)
	for b := range lens {
		lens[b] = maxLen
	}
	if v, ok, err := intsInput(c, 0); err != nil {
		return err
	} else if ok {
		if int64(len(v)) != batch {
			return c.Errorf("sequence_lens has %d values for batch size %d", len(v), batch)
		}
		for b, l := range v {
			if l < 0 || l > maxLen {
				return c.Errorf("sequence_lens[%d] = %d out of range [0, %d]", b, l, maxLen)
			}
		}
		lens = v
	}
	finals := make([][]*graph.Tensor, len(states))
	outs := make([][]*graph.Tensor, spec.nOut)
	for b := range batch {
		bStates := make([]graph.Value, len(states))
		for i, t := range stateTs {
			bStates[i] = squeezeSlice(t, 0, b)
		}
		bScans := make([]*graph.Tensor, len(scans))
		for j, x := range scans {
			bScans[j] = sliceAxis(squeezeSlice(x, 0, b), 0, 0, lens[b])
		}
		f, ys, err := spec.run(c, bStates, bScans)
		if err != nil {
			return c.Errorf("batch %d: %w", b, err)
		}
		for i, v := range f {
			t, ok := v.(*graph.Tensor)
			if !ok {
				return c.Errorf("batch %d: state %d is a %v, not a tensor", b, i, valueTypeOf(v))
			}
			finals[i] = append(finals[i], t)
		}
		for k, y := range ys {
			if y.Rank() > 0 && y.Shape[0] < maxLen {
				shape := append([]int64{}, y.Shape...)
				shape[0] = maxLen
				padded := graph.NewTensor(y.DType, shape)
				dst := outCells(padded)
				copyCells(dst, 0, inCells(y), 0, y.NumElements())
				storeCells(padded, dst)
				y = padded
			}
			outs[k] = append(outs[k], y)
		}
	}
	for i, items := range finals {
		t, err := stackAxis(items, 0, nil)
		if err != nil {
			return c.Errorf("state %d: %w", i, err)
		}
		c.Out[i] = t
	}
	for k, items := range outs {
		t, err := stackAxis(items, 0, nil)
		if err != nil {
			return c.Errorf("scan output %d: %w", k, err)
		}
		c.Out[len(states)+k] = t
	}
	return nil
}
