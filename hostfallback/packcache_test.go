package hostfallback

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
)

// TestSharedPack packs a weight twice, as two plans do: the second gets
// the first's packing, which holds gemmPackWhole's layout; another weight
// of the same size gets its own, and so does the weight read transposed;
// once no one holds the packings, the garbage collector frees them and
// their entries leave the cache.
func TestSharedPack(t *testing.T) {
	const k, n = 300, 70
	w := graph.NewTensor(graph.Float, []int64{k, n})
	for i := range graph.View[float32](w) {
		graph.View[float32](w)[i] = float32(i%17) - 8
	}
	other := graph.NewTensor(graph.Float, []int64{k, n})
	a := sharedPack(w, false, k, n)
	b := sharedPack(w, false, k, n)
	require.Same(t, a, b, "the second plan packed the weight again")
	require.True(t, slices.Equal(a.data, gemmPackWhole(false, graph.View[float32](w), k, n, gemmBest.nr)), "the shared packing differs from gemmPackWhole's")
	c := sharedPack(other, false, k, n)
	require.NotSame(t, a, c, "two weights share a packing")
	d := sharedPack(w, true, n, k)
	require.True(t, slices.Equal(d.data, gemmPackWhole(true, graph.View[float32](w), n, k, gemmBest.nr)), "the transposed packing differs from gemmPackWhole's")
	held := func() bool {
		return packHeld(w, false, k, n) || packHeld(other, false, k, n) || packHeld(w, true, n, k)
	}
	require.True(t, packHeld(w, false, k, n) && packHeld(other, false, k, n) && packHeld(w, true, n, k), "a packing in use left the cache")
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	runtime.KeepAlive(d)
	a, b, c, d = nil, nil, nil, nil
	deadline := time.Now().Add(5 * time.Second)
	for held() && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	require.False(t, held(), "packings no plan holds stayed cached")
	runtime.KeepAlive(w)
	runtime.KeepAlive(other)
}
