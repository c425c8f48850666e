package hostfallback

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBroadcastShapes(t *testing.T) {
	for _, tc := range []struct {
		in   [][]int64
		want []int64
		bad  bool
	}{
		{in: [][]int64{{2, 3}, {2, 3}}, want: []int64{2, 3}},
		{in: [][]int64{{}, {4, 5}}, want: []int64{4, 5}},
		{in: [][]int64{{}, {}}, want: []int64{}},
		{in: [][]int64{{1, 3, 1}, {7, 1, 5}}, want: []int64{7, 3, 5}},
		{in: [][]int64{{2, 3, 4, 5}, {5}}, want: []int64{2, 3, 4, 5}},
		{in: [][]int64{{8, 1, 6, 1}, {7, 1, 5}}, want: []int64{8, 7, 6, 5}},
		{in: [][]int64{{0, 3}, {1, 3}}, want: []int64{0, 3}},
		{in: [][]int64{{0}, {1}}, want: []int64{0}},
		{in: [][]int64{{2, 1}, {1, 3}, {4, 1, 1}}, want: []int64{4, 2, 3}},
		{in: [][]int64{{2, 3}, {3, 2}}, bad: true},
		{in: [][]int64{{0}, {2}}, bad: true},
		{in: [][]int64{{4}, {1, 3}}, bad: true},
	} {
		got, err := broadcastShapes(tc.in...)
		if tc.bad {
			if err == nil {
				t.Errorf("%v: got %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestBroadcastPlanMerges(t *testing.T) {
	for _, tc := range []struct {
		out, a, b []int64
		dims      []int
		sa, sb    []int
		mode      runMode
	}{
		// bias add over channels: the bias stays along H*W.
		{out: []int64{2, 3, 4, 5}, a: []int64{2, 3, 4, 5}, b: []int64{3, 1, 1},
			dims: []int{2, 3, 20}, sa: []int{60, 20, 1}, sb: []int{0, 1, 0}, mode: runVS},
		// same shape collapses to one run.
		{out: []int64{2, 3, 4}, a: []int64{2, 3, 4}, b: []int64{2, 3, 4},
			dims: []int{24}, sa: []int{1}, sb: []int{1}, mode: runVV},
		// scalar on the left.
		{out: []int64{5, 7}, a: []int64{}, b: []int64{5, 7},
			dims: []int{35}, sa: []int{0}, sb: []int{1}, mode: runSV},
		// outer product.
		{out: []int64{4, 6}, a: []int64{4, 1}, b: []int64{6},
			dims: []int{4, 6}, sa: []int{1, 0}, sb: []int{0, 1}, mode: runSV},
		// trailing size-1 dimensions are dropped.
		{out: []int64{3, 1, 4, 1}, a: []int64{3, 1, 4, 1}, b: []int64{1, 4, 1},
			dims: []int{3, 4}, sa: []int{4, 1}, sb: []int{0, 1}, mode: runVV},
		// everything of size one.
		{out: []int64{1, 1}, a: []int64{1}, b: []int64{},
			dims: []int{1}, sa: []int{1}, sb: []int{1}, mode: runVV},
	} {
		p, err := newBroadcastPlan(tc.out, tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.dims, tc.dims) || !slices.Equal(p.strides[0], tc.sa) ||
			!slices.Equal(p.strides[1], tc.sb) || p.mode2() != tc.mode {
			t.Errorf("%v ← %v, %v: dims %v strides %v %v mode %d, want %v %v %v %d",
				tc.out, tc.a, tc.b, p.dims, p.strides[0], p.strides[1], p.mode2(), tc.dims, tc.sa, tc.sb, tc.mode)
		}
	}
	if _, err := newBroadcastPlan([]int64{2, 3}, []int64{2, 4}); err == nil {
		t.Error("mismatched dimension: no error")
	}
	if _, err := newBroadcastPlan([]int64{3}, []int64{2, 3}); err == nil {
		t.Error("input of higher rank: no error")
	}
}

// TestBroadcastPlanRuns checks every element's input offsets over random
// shapes of rank 0 to 6 with odd sizes, for arbitrary [lo, hi) splits.
func TestBroadcastPlanRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int64{1, 1, 2, 3, 13}
	for iter := range 400 {
		rank := iter % 7
		out := make([]int64, rank)
		for i := range out {
			out[i] = sizes[rng.IntN(len(sizes))]
		}
		if iter%50 == 7 && rank > 0 {
			out[rng.IntN(rank)] = 127
		}
		var ins [][]int64
		for range 1 + rng.IntN(maxBroadcastInputs) {
			r := rng.IntN(rank + 1)
			s := slices.Clone(out[rank-r:])
			for i := range s {
				if rng.IntN(3) == 0 {
					s[i] = 1
				}
			}
			ins = append(ins, s)
		}
		p, err := newBroadcastPlan(out, ins...)
		if err != nil {
			t.Fatal(err)
		}
		n := p.n
		lo := rng.IntN(n + 1)
		hi := lo + rng.IntN(n-lo+1)
		seen := make([]bool, n)
		p.runs(lo, hi, func(o int, in *[maxBroadcastInputs]int, cnt int) {
			for j := range cnt {
				seen[o+j] = true
				idx := ewUnravel(int64(o+j), out)
				for k, s := range ins {
					step := 0
					if p.unit[k] {
						step = j
					}
					if want := ewIndex(s, out, idx); int64(in[k]+step) != want {
						t.Fatalf("out %v ins %v: element %d input %d at %d, want %d", out, ins, o+j, k, in[k]+step, want)
					}
				}
			}
		})
		for i, ok := range seen {
			if ok != (i >= lo && i < hi) {
				t.Fatalf("out %v ins %v [%d,%d): element %d visited %v", out, ins, lo, hi, i, ok)
			}
		}
	}
}

func TestLegacyBroadcastShape(t *testing.T) {
	c := &Call{Node: nil}
	for _, tc := range []struct {
		a, b  []int64
		attrs ewAttrs
		want  []int64
		bad   bool
	}{
		{a: []int64{2, 3, 4, 5}, b: []int64{5}, attrs: ewWith(ewInt("broadcast", 1)), want: []int64{1, 1, 1, 5}},
		{a: []int64{2, 3, 4, 5}, b: []int64{3, 4}, attrs: ewWith(ewInt("broadcast", 1), ewInt("axis", 1)), want: []int64{1, 3, 4, 1}},
		{a: []int64{2, 3, 4, 5}, b: []int64{2}, attrs: ewWith(ewInt("broadcast", 1), ewInt("axis", 0)), want: []int64{2, 1, 1, 1}},
		{a: []int64{2, 3}, b: []int64{1}, attrs: ewWith(ewInt("broadcast", 1), ewInt("axis", 0)), want: nil},
		{a: []int64{2, 3}, b: []int64{2, 3}, attrs: nil, want: []int64{2, 3}},
		{a: []int64{2, 3}, b: []int64{3}, attrs: nil, bad: true},
		{a: []int64{2, 3}, b: []int64{3}, attrs: ewWith(ewInt("broadcast", 1), ewInt("axis", 2)), bad: true},
	} {
		c.Node = ewNode("Add", tc.attrs)
		got, err := legacyBroadcastShape(c, tc.a, tc.b)
		if tc.bad != (err != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("%v, %v %v: got %v, %v; want %v (error %v)", tc.a, tc.b, tc.attrs, got, err, tc.want, tc.bad)
		}
	}
}
