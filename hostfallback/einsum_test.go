package hostfallback

import (
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func einsumAttrs(eq string) ewAttrs { return ewWith(ewString("equation", eq)) }

func TestEinsum(t *testing.T) {
	a := xF64(ewShape(2, 3), 1, 2, 3, 4, 5, 6)
	b := xF64(ewShape(3, 2), 1, 0, 0, 1, 1, 1)
	y := ewRun(t, "Einsum", 12, einsumAttrs("ij,jk->ik"), a, b)
	ewCheck(t, "matmul", y, graph.Double, ewShape(2, 2), []float64{4, 5, 10, 11}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("ij->ji"), a)
	ewCheck(t, "transpose", y, graph.Double, ewShape(3, 2), []float64{1, 4, 2, 5, 3, 6}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("ij"), a)
	ewCheck(t, "implicit identity", y, graph.Double, ewShape(2, 3), []float64{1, 2, 3, 4, 5, 6}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("ba"), a)
	ewCheck(t, "implicit transpose", y, graph.Double, ewShape(3, 2), []float64{1, 4, 2, 5, 3, 6}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("ij->"), a)
	ewCheck(t, "sum", y, graph.Double, ewShape(), []float64{21}, 0)
	sq := ewT(graph.Int32, ewShape(2, 2), int32(1), 2, 3, 4)
	y = ewRun(t, "Einsum", 12, einsumAttrs("ii"), sq)
	ewCheck(t, "trace", y, graph.Int32, ewShape(), []float64{5}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("ii->i"), sq)
	ewCheck(t, "diagonal", y, graph.Int32, ewShape(2), []float64{1, 4}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("i,i"), xF64(ewShape(3), 1, 2, 3), xF64(ewShape(3), 4, 5, 6))
	ewCheck(t, "inner", y, graph.Double, ewShape(), []float64{32}, 0)
	y = ewRun(t, "Einsum", 12, einsumAttrs("i,j->ij"), xF64(ewShape(2), 1, 2), xF64(ewShape(2), 3, 4))
	ewCheck(t, "outer", y, graph.Double, ewShape(2, 2), []float64{3, 4, 6, 8}, 0)
	// Ellipsis with broadcasting of a size-1 batch axis.
	y = ewRun(t, "Einsum", 12, einsumAttrs("...ij,...jk->...ik"), xF64(ewShape(2, 1, 2), 1, 2, 3, 4), xF64(ewShape(1, 2, 1), 1, 1))
	ewCheck(t, "ellipsis", y, graph.Double, ewShape(2, 1, 1), []float64{3, 7}, 0)
	ewFails(t, "Einsum", 12, einsumAttrs("ij,jk->ik"), a, a)
	ewFails(t, "Einsum", 12, einsumAttrs("ij->k"), a)
	ewFails(t, "Einsum", 12, einsumAttrs("i1"), a)
	ewFails(t, "Einsum", 12, einsumAttrs("ij,jk"), a)
}

// TestEinsumGemm checks the float32 batched-sgemm path against the strided
// loop it replaces, on contractions with batch, free, summed-away and
// repeated labels.
func TestEinsumGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	cases := []struct {
		eq     string
		sa, sb []int64
	}{
		{"ij,jk->ik", ewShape(5, 7), ewShape(7, 3)},
		{"ji,kj->ik", ewShape(7, 5), ewShape(3, 7)},
		{"bij,bkj->bik", ewShape(2, 4, 6), ewShape(2, 5, 6)},
		{"bij,bjk->bki", ewShape(2, 4, 6), ewShape(2, 6, 5)},
		{"abc,cad->bd", ewShape(3, 4, 5), ewShape(5, 3, 2)},
		{"ijx,jky->ki", ewShape(3, 4, 2), ewShape(4, 5, 3)},
		{"iij,jk->ik", ewShape(3, 3, 4), ewShape(4, 2)},
		{"...j,j->...", ewShape(2, 3, 4), ewShape(4)},
	}
	for _, tc := range cases {
		a, b := ewRandF32(r, tc.sa), ewRandF32(r, tc.sb)
		got := ewRun(t, "Einsum", 12, einsumAttrs(tc.eq), a, b)
		ad, bd := xF64(tc.sa, ewValues(a)...), xF64(tc.sb, ewValues(b)...)
		want := ewRun(t, "Einsum", 12, einsumAttrs(tc.eq), ad, bd)
		ewCheck(t, tc.eq, got, graph.Float, want.Shape, ewValues(want), 1e-5)
	}
}
