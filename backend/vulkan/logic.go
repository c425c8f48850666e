package vulkan

import "github.com/onnxvk/onnxvk/graph"

// And, Or, Xor (opset 7 on, with broadcasting) and Not of bool tensors run
// on predicate.comp.
func init() {
	for name, op := range map[string]int32{"And": predAnd, "Or": predOr, "Xor": predXor} {
		register(name, func(q *query) (*launch, bool) {
			if q.opset < 7 || len(q.shapes) != 2 || q.shapes[1] == nil || q.elems[0] != graph.Bool || q.elems[1] != graph.Bool {
				return nil, false
			}
			return predicateLaunch(q, 16*predicateTypes[graph.Bool]+op, 0, 1)
		})
	}
	register("Not", func(q *query) (*launch, bool) {
		if len(q.shapes) != 1 || q.elems[0] != graph.Bool {
			return nil, false
		}
		return predicateLaunch(q, 16*predicateTypes[graph.Bool]+predNot, 0, 0)
	})
}
