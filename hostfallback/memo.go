package hostfallback

import (
	"slices"
	"sync/atomic"
)

// memoEntry is a step's cached plan and the key it was built for.
type memoEntry struct {
	key  []int64
	plan any
}

// Memo returns the plan that build made at the last call of this node with
// an equal key, and calls build (keeping its result) when there is none:
// the index tables, packed weights and loop geometry that a kernel derives
// from its input shapes are built once per compiled program instead of
// once per run. The key must fix everything build reads besides the node's
// attributes and its constant inputs (see Call.Const); a plan is shared
// by concurrent runs and must not be changed once built. Outside a
// compiled program (subgraphs, tests) build runs every time.
func Memo[P any](c *Call, key []int64, build func() (P, error)) (P, error) {
	if c.memo == nil {
		return build()
	}
	if e := c.memo.Load(); e != nil && slices.Equal(e.key, key) {
		if p, ok := e.plan.(P); ok {
			return p, nil
		}
	}
	p, err := build()
	if err == nil {
		c.memo.Store(&memoEntry{key: slices.Clone(key), plan: p})
	}
	return p, err
}

// ShapeKey returns a memo key made of the ranks and dimensions of the
// call's inputs (-1 for an absent or non-tensor one) followed by extra. It
// reuses the call's buffer: the key is valid until the next ShapeKey.
func (c *Call) ShapeKey(extra ...int64) []int64 {
	k := c.key[:0]
	for i := range c.In {
		t := c.Tensor(i)
		if t == nil {
			k = append(k, -1)
			continue
		}
		k = append(append(k, int64(len(t.Shape))), t.Shape...)
	}
	k = append(k, extra...)
	c.key = k
	return k
}

// Const reports whether input i is fixed for the compiled program (a
// weight or a value folded at plan time), so that a plan may hold data
// derived from its contents.
func (c *Call) Const(i int) bool { return i < len(c.consts) && c.consts[i] }

// stepMemo is a compiled step's plan cache.
type stepMemo = atomic.Pointer[memoEntry]
