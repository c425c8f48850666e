package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// nnSigmoid is the logistic function.
func nnSigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// rnnRef is a recurrent configuration and its inputs for the naive
// reference, all in layout 0.
type rnnRef struct {
	kind                      string // "RNN", "GRU" or "LSTM"
	seq, batch, input, hidden int
	dirs                      int
	reverse, lbr, inputForget bool
	clip                      float64
	x, w, r, b, p, h0, c0     []float32
	lens                      []int
}

func (c *rnnRef) gates() int {
	return map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[c.kind]
}

// run computes Y [seq, dirs, batch, hidden], Y_h and Y_c by the ONNX
// equations, one scalar at a time in float64, with the default
// activations.
func (c *rnnRef) run() (y, yh, yc []float64) {
	H, I, G := c.hidden, c.input, c.gates()
	y = make([]float64, c.seq*c.dirs*c.batch*H)
	yh = make([]float64, c.dirs*c.batch*H)
	yc = make([]float64, c.dirs*c.batch*H)
	clip := func(v float64) float64 {
		if c.clip > 0 {
			return math.Min(math.Max(v, -c.clip), c.clip)
		}
		return v
	}
	for d := range c.dirs {
		w := c.w[d*G*H*I:]
		r := c.r[d*G*H*H:]
		wb, rb := c.b[d*2*G*H:], c.b[d*2*G*H+G*H:]
		for b := range c.batch {
			h := make([]float64, H)
			cell := make([]float64, H)
			for j := range H {
				h[j] = float64(c.h0[(d*c.batch+b)*H+j])
				if c.c0 != nil {
					cell[j] = float64(c.c0[(d*c.batch+b)*H+j])
				}
			}
			// pre(g, j, hv) is gate g's pre-activation for unit j with
			// recurrent input hv (nil: none) and no bias.
			pre := func(t, g, j int, hv []float64) float64 {
				var s float64
				for k := range I {
					s += float64(c.x[(t*c.batch+b)*I+k]) * float64(w[(g*H+j)*I+k])
				}
				for k := range hv {
					s += hv[k] * float64(r[(g*H+j)*H+k])
				}
				return s
			}
			bias := func(g, j int) (float64, float64) { return float64(wb[g*H+j]), float64(rb[g*H+j]) }
			for s := range c.lens[b] {
				t := s
				if c.reverse || d == 1 {
					t = c.lens[b] - 1 - s
				}
				next := make([]float64, H)
				switch c.kind {
				case "RNN":
					for j := range H {
						bw, br := bias(0, j)
						next[j] = math.Tanh(clip(pre(t, 0, j, h) + bw + br))
					}
				case "GRU":
					z, rr := make([]float64, H), make([]float64, H)
					for j := range H {
						bw, br := bias(0, j)
						z[j] = nnSigmoid(clip(pre(t, 0, j, h) + bw + br))
						bw, br = bias(1, j)
						rr[j] = nnSigmoid(clip(pre(t, 1, j, h) + bw + br))
					}
					rh := make([]float64, H)
					for j := range H {
						rh[j] = rr[j] * h[j]
					}
					for j := range H {
						bw, br := bias(2, j)
						var v float64
						if c.lbr {
							v = pre(t, 2, j, nil) + rr[j]*(pre(t, 2, j, h)-pre(t, 2, j, nil)+br) + bw
						} else {
							v = pre(t, 2, j, rh) + br + bw
						}
						next[j] = (1-z[j])*math.Tanh(clip(v)) + z[j]*h[j]
					}
				case "LSTM":
					for j := range H {
						p := func(k int) float64 {
							if c.p == nil {
								return 0
							}
							return float64(c.p[d*3*H+k*H+j])
						}
						gate := func(g int) float64 {
							bw, br := bias(g, j)
							return pre(t, g, j, h) + bw + br
						}
						i := nnSigmoid(clip(gate(0) + p(0)*cell[j]))
						f := nnSigmoid(clip(gate(2) + p(2)*cell[j]))
						if c.inputForget {
							f = 1 - i
						}
						cc := math.Tanh(clip(gate(3)))
						cell[j] = f*cell[j] + i*cc
						o := nnSigmoid(clip(gate(1) + p(1)*cell[j]))
						next[j] = o * math.Tanh(cell[j])
					}
				}
				h = next
				for j := range H {
					y[((t*c.dirs+d)*c.batch+b)*H+j] = h[j]
				}
			}
			for j := range H {
				yh[(d*c.batch+b)*H+j] = h[j]
				yc[(d*c.batch+b)*H+j] = cell[j]
			}
		}
	}
	return y, yh, yc
}

func nn64to32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func TestRNNHandComputed(t *testing.T) {
	// One unit: W = 2, R = 0.5, Wb + Rb = 0.3, X = [1, −1].
	x := nnF32([]int64{2, 1, 1}, 1, -1)
	w, r, b := nnF32([]int64{1, 1, 1}, 2), nnF32([]int64{1, 1, 1}, 0.5), nnF32([]int64{1, 2}, 0.1, 0.2)
	h1 := math.Tanh(2.3)
	h2 := math.Tanh(-2 + 0.5*h1 + 0.3)
	out, err := nnRunOuts("RNN", 14, nnAttrs{"hidden_size": 1}, []string{"y", "yh"}, x, w, r, b)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "RNN Y", out[0], []int64{2, 1, 1, 1}, []float32{float32(h1), float32(h2)}, 1e-6, 1e-6)
	nnCheck(t, "RNN Y_h", out[1], []int64{1, 1, 1}, []float32{float32(h2)}, 1e-6, 1e-6)

	// Reverse with an activation taking alpha and beta.
	out, err = nnRunOuts("RNN", 14, nnAttrs{"hidden_size": 1, "direction": "reverse", "activations": []string{"HardSigmoid"},
		"activation_alpha": []float32{0.25}, "activation_beta": []float32{0.5}}, []string{"y", ""}, x, w, r, b)
	if err != nil {
		t.Fatal(err)
	}
	hs := func(v float64) float64 { return math.Min(math.Max(0.25*v+0.5, 0), 1) }
	r1 := hs(-2 + 0.3)
	r0 := hs(2 + 0.5*r1 + 0.3)
	nnCheck(t, "reverse HardSigmoid", out[0], []int64{2, 1, 1, 1}, []float32{float32(r0), float32(r1)}, 1e-6, 1e-6)

	// GRU, one unit, W = [1 2 3] (z r h), R = [0.5 0.5 0.5], no bias.
	wg, rg := nnF32([]int64{1, 3, 1}, 1, 2, 3), nnF32([]int64{1, 3, 1}, 0.5, 0.5, 0.5)
	h0 := nnF32([]int64{1, 1, 1}, 1)
	x1 := nnF32([]int64{1, 1, 1}, 1)
	z, rr := nnSigmoid(1+0.5), nnSigmoid(2+0.5)
	for _, lbr := range []int{0, 1} {
		// With no bias the two forms of the h gate coincide.
		hh := math.Tanh(3 + 0.5*rr)
		want := (1-z)*hh + z
		y, err := nnRunOuts("GRU", 14, nnAttrs{"hidden_size": 1, "linear_before_reset": lbr}, []string{"", "yh"}, x1, wg, rg, nil, nil, h0)
		if err != nil {
			t.Fatal(err)
		}
		nnCheck(t, fmt.Sprint("GRU lbr ", lbr), y[1], []int64{1, 1, 1}, []float32{float32(want)}, 1e-6, 1e-6)
	}

	// LSTM, one unit, all weights 1 (i o f c), input_forget.
	wl, rl := nnF32([]int64{1, 4, 1}, 1, 1, 1, 1), nnF32([]int64{1, 4, 1}, 1, 1, 1, 1)
	i := nnSigmoid(1)
	cell := (1-i)*0 + i*math.Tanh(1)
	o := nnSigmoid(1)
	out, err = nnRunOuts("LSTM", 14, nnAttrs{"hidden_size": 1, "input_forget": 1}, []string{"", "yh", "yc"}, x1, wl, rl)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "LSTM Y_h", out[1], []int64{1, 1, 1}, []float32{float32(o * math.Tanh(cell))}, 1e-6, 1e-6)
	nnCheck(t, "LSTM Y_c", out[2], []int64{1, 1, 1}, []float32{float32(cell)}, 1e-6, 1e-6)
}

func TestRNNErrors(t *testing.T) {
	x := nnF32([]int64{2, 1, 1}, 1, -1)
	w, r := nnF32([]int64{1, 1, 1}, 2), nnF32([]int64{1, 1, 1}, 0.5)
	bad := []struct {
		name  string
		attrs nnAttrs
		ins   []*graph.Tensor
	}{
		{"hidden size", nnAttrs{"hidden_size": 2}, []*graph.Tensor{x, w, r}},
		{"direction", nnAttrs{"direction": "bidirectional"}, []*graph.Tensor{x, w, r}},
		{"activation", nnAttrs{"activations": []string{"Swish"}}, []*graph.Tensor{x, w, r}},
		{"activation count", nnAttrs{"activations": []string{"Tanh", "Tanh"}}, []*graph.Tensor{x, w, r}},
		{"layout", nnAttrs{"layout": 2}, []*graph.Tensor{x, w, r}},
		{"bias shape", nil, []*graph.Tensor{x, w, r, nnF32([]int64{1, 1}, 0)}},
		{"sequence_lens", nil, []*graph.Tensor{x, w, r, nil, func() *graph.Tensor {
			s, _ := graph.FromSlice(graph.Int32, []int64{1}, []int32{3})
			return s
		}()}},
		{"clip", nnAttrs{"clip": -1.0}, []*graph.Tensor{x, w, r}},
		// W, R and B of another type than X (an int64 W panicked reading
		// it as floats; found by FuzzPipeline).
		{"W type", nil, []*graph.Tensor{x, mvI64([]int64{1, 1, 1}, 2), r}},
		{"R type", nil, []*graph.Tensor{x, w, mvI64([]int64{1, 1, 1}, 2)}},
		{"B type", nil, []*graph.Tensor{x, w, r, mvI64([]int64{1, 2}, 0, 0)}},
	}
	for _, tc := range bad {
		if _, err := nnRun("RNN", 14, tc.attrs, tc.ins...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestRNNRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	type tcase struct {
		kind                      string
		seq, batch, input, hidden int
		dir                       string
		lens                      []int32
		peep, lbr, inputForget    bool
		clip                      float64
	}
	cases := []tcase{
		{kind: "RNN", seq: 5, batch: 3, input: 4, hidden: 6, dir: "bidirectional", lens: []int32{5, 2, 0}},
		{kind: "GRU", seq: 7, batch: 2, input: 3, hidden: 5, dir: "forward"},
		{kind: "GRU", seq: 6, batch: 4, input: 13, hidden: 9, dir: "bidirectional", lbr: true, lens: []int32{6, 1, 3, 6}},
		{kind: "GRU", seq: 4, batch: 1, input: 2, hidden: 3, dir: "reverse", clip: 0.5},
		{kind: "LSTM", seq: 6, batch: 3, input: 5, hidden: 7, dir: "forward", peep: true},
		{kind: "LSTM", seq: 5, batch: 4, input: 3, hidden: 4, dir: "bidirectional", peep: true, lens: []int32{1, 5, 3, 4}, clip: 0.8},
		{kind: "LSTM", seq: 3, batch: 2, input: 4, hidden: 3, dir: "reverse", inputForget: true},
		{kind: "LSTM", seq: 9, batch: 5, input: 33, hidden: 65, dir: "bidirectional"},
		// Recurrent weights wide enough to be packed for the GEMV (one
		// batch row) and for the GEMM (more rows than the GEMV takes).
		{kind: "LSTM", seq: 4, batch: 1, input: 6, hidden: 32, dir: "forward", peep: true},
		{kind: "GRU", seq: 5, batch: 1, input: 8, hidden: 20, dir: "bidirectional", lbr: true},
		{kind: "GRU", seq: 3, batch: 2, input: 5, hidden: 24, dir: "reverse"},
		{kind: "RNN", seq: 4, batch: 6, input: 7, hidden: 40, dir: "forward"},
	}
	for _, tc := range cases {
		ref := &rnnRef{kind: tc.kind, seq: tc.seq, batch: tc.batch, input: tc.input, hidden: tc.hidden, dirs: 1,
			reverse: tc.dir == "reverse", lbr: tc.lbr, inputForget: tc.inputForget, clip: tc.clip}
		if tc.dir == "bidirectional" {
			ref.dirs = 2
		}
		G, H, D := int64(ref.gates()), int64(tc.hidden), int64(ref.dirs)
		x := nnRand(r, int64(tc.seq), int64(tc.batch), int64(tc.input))
		w, rr, b := nnRand(r, D, G*H, int64(tc.input)), nnRand(r, D, G*H, H), nnRand(r, D, 2*G*H)
		h0, c0, p := nnRand(r, D, int64(tc.batch), H), nnRand(r, D, int64(tc.batch), H), nnRand(r, D, 3*H)
		ref.x, ref.w, ref.r, ref.b, ref.h0 = graph.View[float32](x), graph.View[float32](w), graph.View[float32](rr), graph.View[float32](b), graph.View[float32](h0)
		ins := []*graph.Tensor{x, w, rr, b, nil, h0}
		ref.lens = make([]int, tc.batch)
		for i := range ref.lens {
			ref.lens[i] = tc.seq
		}
		if tc.lens != nil {
			sl, _ := graph.FromSlice(graph.Int32, []int64{int64(tc.batch)}, tc.lens)
			ins[4] = sl
			for i, n := range tc.lens {
				ref.lens[i] = int(n)
			}
		}
		outs := []string{"y", "yh"}
		if tc.kind == "LSTM" {
			ref.c0 = graph.View[float32](c0)
			ins = append(ins, c0)
			outs = append(outs, "yc")
			if tc.peep {
				ref.p = graph.View[float32](p)
				ins = append(ins, p)
			}
		}
		attrs := nnAttrs{"hidden_size": tc.hidden, "direction": tc.dir}
		if tc.lbr {
			attrs["linear_before_reset"] = 1
		}
		if tc.inputForget {
			attrs["input_forget"] = 1
		}
		if tc.clip > 0 {
			attrs["clip"] = tc.clip
		}
		y, yh, yc := ref.run()
		name := fmt.Sprintf("%+v", tc)
		got, err := nnRunOuts(tc.kind, 14, attrs, outs, ins...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		state := []int64{D, int64(tc.batch), H}
		tol := opTol(tc.kind)
		nnCheck(t, name+" Y", got[0], []int64{int64(tc.seq), D, int64(tc.batch), H}, nn64to32(y), tol.Abs, tol.Rel)
		nnCheck(t, name+" Y_h", got[1], state, nn64to32(yh), tol.Abs, tol.Rel)
		if tc.kind == "LSTM" {
			nnCheck(t, name+" Y_c", got[2], state, nn64to32(yc), tol.Abs, tol.Rel)
		}

		// The same node in layout 1 gives the transposed outputs.
		attrs["layout"] = 1
		ins1 := append([]*graph.Tensor{}, ins...)
		ins1[0] = nnSwap01(x)
		ins1[5] = nnSwap01(h0)
		if tc.kind == "LSTM" {
			ins1[6] = nnSwap01(c0)
		}
		got1, err := nnRunOuts(tc.kind, 14, attrs, outs, ins1...)
		if err != nil {
			t.Fatalf("%s layout 1: %v", name, err)
		}
		y1 := got1[0]
		for ti := range tc.seq {
			for d := range ref.dirs {
				for bi := range tc.batch {
					for j := range tc.hidden {
						a := graph.View[float32](got[0])[((ti*ref.dirs+d)*tc.batch+bi)*tc.hidden+j]
						b := graph.View[float32](y1)[((bi*tc.seq+ti)*ref.dirs+d)*tc.hidden+j]
						if a != b {
							t.Fatalf("%s: layout 1 Y[%d %d %d %d] = %v, layout 0 %v", name, bi, ti, d, j, b, a)
						}
					}
				}
			}
		}
		for k := 1; k < len(outs); k++ {
			nnCheck(t, name+" layout 1 state", nnSwap01(got1[k]), state, graph.View[float32](got[k]), 0, 0)
		}
	}
}

// nnSwap01 transposes the first two axes of a 3-D float32 tensor.
func nnSwap01(t *graph.Tensor) *graph.Tensor {
	a, b, n := int(t.Shape[0]), int(t.Shape[1]), int(t.Shape[2])
	out := graph.NewTensor(graph.Float, []int64{int64(b), int64(a), int64(n)})
	src, dst := graph.View[float32](t), graph.View[float32](out)
	for i := range a {
		for j := range b {
			copy(dst[(j*a+i)*n:(j*a+i+1)*n], src[(i*b+j)*n:(i*b+j+1)*n])
		}
	}
	return out
}

func TestRNNTypes(t *testing.T) {
	x := graph.NewTensor(graph.Float16, []int64{1, 1, 1})
	w := graph.NewTensor(graph.Float16, []int64{1, 1, 1})
	f32Commit(x, []float32{1})
	f32Commit(w, []float32{0.5})
	y, err := nnRun("RNN", 14, nnAttrs{"activations": []string{"Relu"}}, x, w, w)
	if err != nil {
		t.Fatal(err)
	}
	if y.DType != graph.Float16 {
		t.Fatalf("got %s", y.DType)
	}
	nnCheck(t, "float16 RNN", y, []int64{1, 1, 1, 1}, []float32{0.5}, 0, 0)
}
