package vulkan

import (
	"slices"
	"testing"
)

// TestRestride checks the strides a view keeps, and the views whose
// elements are not at one stride.
func TestRestride(t *testing.T) {
	cases := []struct {
		from, st, to, want []int64
	}{
		{[]int64{1, 1, 512}, []int64{1536, 1536, 1}, []int64{1, 1, 8, 64}, []int64{0, 0, 64, 1}},
		{[]int64{2, 3, 16}, []int64{144, 48, 1}, []int64{2, 3, 4, 4}, []int64{144, 48, 4, 1}},
		{[]int64{2, 3, 4}, []int64{12, 4, 1}, []int64{6, 4}, []int64{4, 1}},
		{[]int64{2, 3, 4}, []int64{24, 4, 1}, []int64{6, 4}, nil},
		{[]int64{4, 4}, []int64{1, 4}, []int64{16}, nil},
	}
	for _, c := range cases {
		got, ok := restride(c.from, c.st, c.to)
		if ok != (c.want != nil) || ok && !slices.Equal(got, c.want) {
			t.Errorf("restride(%v, %v, %v) = %v, %v; want %v", c.from, c.st, c.to, got, ok, c.want)
		}
	}
}
