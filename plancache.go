package onnxvk

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
)

// maxPlans bounds the plan cache; beyond it the least recently used plan
// leaves it.
const maxPlans = 32

// maxRefused bounds the shape classes remembered as failed: beyond it the
// record starts over (a class may then fail once more).
const maxRefused = 1024

// DefaultPlanCacheBytes is the plan cache's byte budget of a session
// without WithPlanCacheBytes (see there).
const DefaultPlanCacheBytes = 1 << 30

// planCache holds a session's compiled plans by shape class (see
// callShape), at most maxPlans and, beyond the plan in use, at most budget
// bytes of host arenas and device memory, dropping the least recently used.
// A plan that leaves the cache frees its device memory
// (backend.Executor.Release) once no Run uses it. The session's mu guards
// it.
type planCache struct {
	plans map[string]*cachedPlan
	// budget bounds the bytes of the cached plans (0: none); bytes is
	// their sum.
	budget, bytes int64
	// clock counts the uses of the cache's plans: a plan's last is the
	// clock at its latest use.
	clock uint64
	// refused holds the shape classes whose plan failed (a class plan
	// that planning refused with symbolic sizes): calls of such a class
	// get concrete plans.
	refused map[string]bool
	// stats counts the plans made and dropped since the session opened.
	stats PlanStats
}

// cachedPlan is a compiled plan, the shape class it serves and its uses.
type cachedPlan struct {
	ex *backend.Executor
	// fixed, sym and dims describe the class: the part of the input types
	// that never varies, the variable dimensions left symbolic (sorted),
	// and the sizes of the others (see callShape).
	fixed string
	sym   []string
	dims  map[string]int64
	// bytes is what the plan holds (backend.Executor.Bytes).
	bytes int64
	// users counts the Runs using ex; last is when it was last used (see
	// planCache.clock); gone is set once it left the cache.
	users int
	last  uint64
	gone  bool
}

// PlanStats counts a session's plans (see Session.PlanStats).
type PlanStats struct {
	// Compiled counts the plans compiled since the session opened, and
	// ClassPlans those of them that serve a shape class with symbolic
	// sizes (see README, "Plans and shape classes").
	Compiled, ClassPlans int64
	// Evicted counts the plans that left the cache to make room.
	Evicted int64
	// Cached is the number of plans in the cache now and CachedBytes what
	// they hold: host arenas and device memory, weights not counted.
	Cached      int
	CachedBytes int64
}

// varDim is a dimension of an input that the model leaves variable: a
// symbolic dimension (name is its parameter) or an unknown one (name is
// made of the input and axis, which no parameter can be).
type varDim struct {
	input string
	axis  int
	name  string
	param string
}

// callShape is what the plan cache needs of a call's input types: types
// themselves, key (them as a string, for RunBatch's check that requests
// agree), fixed (every part of them but the sizes of variable dimensions,
// plus the outputs asked for) and dims (the size of each variable
// dimension by name; a parameter shared by inputs has one size).
type callShape struct {
	types map[string]*graph.Type
	key   string
	fixed string
	dims  map[string]int64
	vars  []varDim
}

// classKey names the shape class of c with the dimensions in sym symbolic:
// the plan cache's key.
func (c *callShape) classKey(sym []string) string {
	var b strings.Builder
	b.WriteString(c.fixed)
	for _, name := range slices.Sorted(maps.Keys(c.dims)) {
		if slices.Contains(sym, name) {
			fmt.Fprintf(&b, "|%q=?", name)
		} else {
			fmt.Fprintf(&b, "|%q=%d", name, c.dims[name])
		}
	}
	return b.String()
}

// classTypes returns c's input types with the dimensions in sym symbolic:
// a parameter's under its name, an unknown dimension unknown.
func (c *callShape) classTypes(sym []string) map[string]*graph.Type {
	if len(sym) == 0 {
		return c.types
	}
	types := maps.Clone(c.types)
	for _, v := range c.vars {
		if !slices.Contains(sym, v.name) {
			continue
		}
		t := *types[v.input]
		t.Shape = slices.Clone(t.Shape)
		if v.param != "" {
			t.Shape[v.axis] = graph.SymDim(v.param)
		} else {
			t.Shape[v.axis] = graph.UnknownDim()
		}
		types[v.input] = &t
	}
	return types
}

// serves reports whether e's plan runs calls of c's input types: they
// agree but for sizes e leaves symbolic. It returns the variable
// dimensions in which they differ, to make a class of, when that is one.
func (e *cachedPlan) serves(c *callShape) (ok bool, differ []string) {
	if e.fixed != c.fixed {
		return false, nil
	}
	for name, size := range c.dims {
		if !slices.Contains(e.sym, name) && e.dims[name] != size {
			differ = append(differ, name)
		}
	}
	return len(differ) == 0, differ
}

// find returns the plan that serves c, now in use, or nil: of those that
// do, the one with the fewest symbolic dimensions.
func (c *planCache) find(call *callShape) *cachedPlan {
	var best *cachedPlan
	for _, e := range c.plans {
		if ok, _ := e.serves(call); ok && (best == nil || len(e.sym) < len(best.sym)) {
			best = e
		}
	}
	if best != nil {
		c.use(best)
	}
	return best
}

// class returns the dimensions to leave symbolic in a new plan for call:
// when a cached plan differs from call in the size of one variable
// dimension, that plan's symbolic dimensions and that one (the fewest
// such), else none (a concrete plan), and none either for a class whose
// plan failed before.
func (c *planCache) class(call *callShape) []string {
	var sym []string
	for _, e := range c.plans {
		_, differ := e.serves(call)
		if len(differ) != 1 {
			continue
		}
		s := slices.Sorted(slices.Values(append(slices.Clone(e.sym), differ[0])))
		if c.refused[call.classKey(s)] {
			continue
		}
		if sym == nil || len(s) < len(sym) {
			sym = s
		}
	}
	return sym
}

func (c *planCache) use(e *cachedPlan) {
	c.clock++
	e.last = c.clock
	e.users++
}

// add caches ex for the class of call with the dimensions sym symbolic, in
// use, in place of the plan cached for that class before, if any; then it
// drops the least recently used other plans while the cache holds more
// than maxPlans plans or more than its budget of bytes.
func (c *planCache) add(call *callShape, sym []string, ex *backend.Executor) *cachedPlan {
	if c.plans == nil {
		c.plans = map[string]*cachedPlan{}
	}
	key := call.classKey(sym)
	if old, ok := c.plans[key]; ok {
		c.drop(key, old)
	}
	e := &cachedPlan{ex: ex, fixed: call.fixed, sym: sym, dims: maps.Clone(call.dims), bytes: ex.Bytes()}
	c.use(e)
	c.plans[key] = e
	c.bytes += e.bytes
	c.stats.Compiled++
	if len(sym) > 0 {
		c.stats.ClassPlans++
	}
	c.trim(e)
	return e
}

// trim drops the least recently used plans but e while the cache holds
// more than maxPlans plans or more than its budget of bytes.
func (c *planCache) trim(e *cachedPlan) {
	for len(c.plans) > maxPlans || c.budget > 0 && c.bytes > c.budget && len(c.plans) > 1 {
		var (
			lruKey string
			lru    *cachedPlan
		)
		for k, o := range c.plans {
			if o != e && (lru == nil || o.last < lru.last) {
				lruKey, lru = k, o
			}
		}
		c.drop(lruKey, lru)
		c.stats.Evicted++
	}
}

// drop removes e, cached for key, and releases it unless a Run uses it.
func (c *planCache) drop(key string, e *cachedPlan) {
	delete(c.plans, key)
	c.bytes -= e.bytes
	e.gone = true
	if e.users == 0 {
		e.ex.Release()
	}
}

// done ends a use of e; the last use of a plan that left the cache
// releases it. A plan still cached counts the bytes it holds now (a class
// plan's GPU programs grow their buffers as sizes grow), and the cache
// drops others while it holds more than its budget.
func (c *planCache) done(e *cachedPlan) {
	if e.users--; e.users == 0 && e.gone {
		e.ex.Release()
	}
	if e.gone {
		return
	}
	n := e.ex.Bytes()
	c.bytes += n - e.bytes
	e.bytes = n
	c.trim(e)
}

// clear drops every plan; no Run may be in progress.
func (c *planCache) clear() {
	for k, e := range c.plans {
		c.drop(k, e)
	}
}
