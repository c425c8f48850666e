package onnxvk

import "github.com/onnxvk/onnxvk/backend"

// maxPlans bounds the plan cache; beyond it the least recently used plan
// leaves it.
const maxPlans = 32

// planCache holds a session's compiled plans by input types, at most
// maxPlans, dropping the least recently used. A plan that leaves the cache
// frees its device memory (backend.Executor.Release) once no Run uses it.
// The session's mu guards it.
type planCache struct {
	plans map[string]*cachedPlan
	// clock counts the uses of the cache's plans: a plan's last is the
	// clock at its latest use.
	clock uint64
}

// cachedPlan is a compiled plan and its uses.
type cachedPlan struct {
	ex *backend.Executor
	// users counts the Runs using ex; last is when it was last used (see
	// planCache.clock); gone is set once it left the cache.
	users int
	last  uint64
	gone  bool
}

// get returns the plan cached for key, now in use, or nil.
func (c *planCache) get(key string) *cachedPlan {
	e := c.plans[key]
	if e != nil {
		c.use(e)
	}
	return e
}

func (c *planCache) use(e *cachedPlan) {
	c.clock++
	e.last = c.clock
	e.users++
}

// add caches ex for key, in use, in place of the plan cached for key
// before, if any, or else of the least recently used plan when the cache
// is full.
func (c *planCache) add(key string, ex *backend.Executor) *cachedPlan {
	if c.plans == nil {
		c.plans = map[string]*cachedPlan{}
	}
	if old, ok := c.plans[key]; ok {
		c.drop(key, old)
	} else if len(c.plans) >= maxPlans {
		var (
			lruKey string
			lru    *cachedPlan
		)
		for k, e := range c.plans {
			if lru == nil || e.last < lru.last {
				lruKey, lru = k, e
			}
		}
		c.drop(lruKey, lru)
	}
	e := &cachedPlan{ex: ex}
	c.use(e)
	c.plans[key] = e
	return e
}

// drop removes e, cached for key, and releases it unless a Run uses it.
func (c *planCache) drop(key string, e *cachedPlan) {
	delete(c.plans, key)
	e.gone = true
	if e.users == 0 {
		e.ex.Release()
	}
}

// done ends a use of e; the last use of a plan that left the cache
// releases it.
func (c *planCache) done(e *cachedPlan) {
	if e.users--; e.users == 0 && e.gone {
		e.ex.Release()
	}
}

// clear drops every plan; no Run may be in progress.
func (c *planCache) clear() {
	for k, e := range c.plans {
		c.drop(k, e)
	}
}
