package hostfallback

import (
	"runtime"
	"sync"
	"weak"

	"github.com/onnxvk/onnxvk/graph"
)

// packedWeight is a constant float32 B matrix packed whole for gemmPacked
// (gemmPackWhole).
type packedWeight struct {
	data []float32
}

// packKey names a packing: the weight tensor (weakly: the cache does not
// keep it alive, and a tensor made later at the same address is another
// key), whether the product reads it transposed, and the product's depth
// and width.
type packKey struct {
	t      weak.Pointer[graph.Tensor]
	transB bool
	k, n   int
}

// packed holds every packed weight of the process that some plan still
// uses, weakly: the plans of every session (a plan per shape class, a
// concrete plan per set of shapes) that multiply by the same weight share
// one packing, made by the first, and the packing goes with the last plan
// that holds it (a step's memo), when the garbage collector finds it
// unreachable; its entry leaves the map then.
var packed struct {
	mu sync.Mutex
	m  map[packKey]weak.Pointer[packedWeight]
}

// sharedPack returns constant weight t, a k×n float32 matrix (n×k read
// transposed when transB is set), packed whole, packing it only when no
// plan holds that packing.
func sharedPack(t *graph.Tensor, transB bool, k, n int) *packedWeight {
	key := packKey{t: weak.Make(t), transB: transB, k: k, n: n}
	packed.mu.Lock()
	defer packed.mu.Unlock()
	if p := packed.m[key].Value(); p != nil {
		return p
	}
	if packed.m == nil {
		packed.m = map[packKey]weak.Pointer[packedWeight]{}
	}
	p := &packedWeight{data: gemmPackWhole(transB, graph.View[float32](t), k, n, gemmBest.nr)}
	packed.m[key] = weak.Make(p)
	runtime.AddCleanup(p, forgetPack, key)
	return p
}

// forgetPack removes the entry of a packing that was collected, unless a
// new packing took its place.
func forgetPack(key packKey) {
	packed.mu.Lock()
	defer packed.mu.Unlock()
	if w, ok := packed.m[key]; ok && w.Value() == nil {
		delete(packed.m, key)
	}
}

// packHeld reports whether the cache has an entry for weight t packed
// for a k×n product, for tests.
func packHeld(t *graph.Tensor, transB bool, k, n int) bool {
	packed.mu.Lock()
	defer packed.mu.Unlock()
	_, ok := packed.m[packKey{t: weak.Make(t), transB: transB, k: k, n: n}]
	return ok
}
