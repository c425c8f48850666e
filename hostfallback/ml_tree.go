package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterDomain(ops.DomainML, "TreeEnsembleRegressor", treeRegressorKernel)
	RegisterDomain(ops.DomainML, "TreeEnsembleClassifier", treeClassifierKernel)
}

// treeNode is one node of a tree ensemble: a branch comparing feature
// against value, or a leaf (leaf set) with its weights.
type treeNode struct {
	leaf        bool
	mode        string
	feature     int
	value       float64
	left, right int // the true and false children
	missingTrue bool
	weights     []treeWeight
}

// treeWeight is a leaf's contribution to one target or class.
type treeWeight struct {
	target int
	w      float64
}

// treeEnsemble is a parsed ensemble: the root of each tree.
type treeEnsemble struct {
	nodes []treeNode
	roots []int
}

// treeFloats returns a float list attribute, or its _as_tensor form when
// that is set.
func treeFloats(v []float32, t *graph.Tensor) []float32 {
	if t == nil {
		return v
	}
	d, _ := toFloat64s(t)
	v = make([]float32, len(d))
	for i, x := range d {
		v[i] = float32(x)
	}
	return v
}

// treeWeights are the leaf weights of a tree ensemble (target_* of a
// regressor, class_* of a classifier): the trees, nodes, targets and
// values.
type treeWeights struct {
	trees, nodes, ids []int64
	weights           []float32
}

// parseTrees builds the ensemble of the nodes a and the leaf weights w;
// prefix (target or class) names the weights in errors.
func parseTrees(c *Call, a *ops.TreeNodes, w treeWeights, prefix string, outputs int) (*treeEnsemble, error) {
	trees, ids, feats, modes, vals := a.NodesTreeids, a.NodesNodeids, a.NodesFeatureids, a.NodesModes, treeFloats(a.NodesValues, a.NodesValuesAsTensor)
	trues, falses, missing := a.NodesTruenodeids, a.NodesFalsenodeids, a.NodesMissingValueTracksTrue
	cnt := len(trees)
	if len(ids) != cnt || len(feats) != cnt || len(modes) != cnt || len(trues) != cnt || len(falses) != cnt ||
		len(vals) != cnt || (len(missing) != 0 && len(missing) != cnt) {
		return nil, c.Errorf("the nodes_* attributes have different lengths")
	}
	type nodeKey struct{ tree, id int64 }
	index := make(map[nodeKey]int, cnt)
	for i := range cnt {
		index[nodeKey{trees[i], ids[i]}] = i
	}
	e := &treeEnsemble{nodes: make([]treeNode, cnt)}
	child := make([]bool, cnt)
	for i := range cnt {
		nd := &e.nodes[i]
		nd.mode, nd.feature, nd.value = modes[i], int(feats[i]), float64(vals[i])
		nd.missingTrue = len(missing) != 0 && missing[i] != 0
		if nd.mode == "LEAF" {
			nd.leaf = true
			continue
		}
		l, ok1 := index[nodeKey{trees[i], trues[i]}]
		r, ok2 := index[nodeKey{trees[i], falses[i]}]
		if !ok1 || !ok2 || nd.feature < 0 {
			return nil, c.Errorf("node %d of tree %d has a missing child or a negative feature", ids[i], trees[i])
		}
		nd.left, nd.right = l, r
		child[l], child[r] = true, true
	}
	seen := map[int64]bool{}
	for i := range cnt {
		if !child[i] && !seen[trees[i]] {
			seen[trees[i]] = true
			e.roots = append(e.roots, i)
		}
	}
	wt, wn, wi, ww := w.trees, w.nodes, w.ids, w.weights
	if len(wn) != len(wt) || len(wi) != len(wt) || len(ww) != len(wt) {
		return nil, c.Errorf("the %s_* attributes have different lengths", prefix)
	}
	for i := range wt {
		j, ok := index[nodeKey{wt[i], wn[i]}]
		if !ok || !e.nodes[j].leaf || wi[i] < 0 || int(wi[i]) >= outputs {
			return nil, c.Errorf("%s weight %d names node %d of tree %d, target %d", prefix, i, wn[i], wt[i], wi[i])
		}
		e.nodes[j].weights = append(e.nodes[j].weights, treeWeight{int(wi[i]), float64(ww[i])})
	}
	return e, nil
}

// leaf walks the tree from root for the features x and returns the leaf.
func (e *treeEnsemble) leaf(root int, x []float64) (*treeNode, bool) {
	nd := &e.nodes[root]
	for steps := 0; !nd.leaf; steps++ {
		if steps > len(e.nodes) || nd.feature >= len(x) {
			return nil, false
		}
		v := x[nd.feature]
		var t bool
		switch {
		case math.IsNaN(v) && nd.missingTrue:
			t = true
		case nd.mode == "BRANCH_LEQ":
			t = v <= nd.value
		case nd.mode == "BRANCH_LT":
			t = v < nd.value
		case nd.mode == "BRANCH_GTE":
			t = v >= nd.value
		case nd.mode == "BRANCH_GT":
			t = v > nd.value
		case nd.mode == "BRANCH_EQ":
			t = v == nd.value
		case nd.mode == "BRANCH_NEQ":
			t = v != nd.value
		default:
			return nil, false
		}
		if t {
			nd = &e.nodes[nd.left]
		} else {
			nd = &e.nodes[nd.right]
		}
	}
	return nd, true
}

// scores aggregates the leaves of every tree for each row of v: [n,
// outputs], then adds the base values of a.
func (e *treeEnsemble) scores(c *Call, a *ops.TreeNodes, v []float64, n, cols, outputs int, agg string) ([]float64, error) {
	base := treeFloats(a.BaseValues, a.BaseValuesAsTensor)
	if len(base) != 0 && len(base) != outputs {
		return nil, c.Errorf("%d base values for %d outputs", len(base), outputs)
	}
	out := make([]float64, n*outputs)
	hits := make([]int, outputs)
	for r := range n {
		row := v[r*cols : (r+1)*cols]
		s := out[r*outputs : (r+1)*outputs]
		clear(hits)
		for _, root := range e.roots {
			lf, ok := e.leaf(root, row)
			if !ok {
				return nil, c.Errorf("a tree reads a missing feature or an unknown node mode")
			}
			for _, w := range lf.weights {
				switch {
				case agg == "MIN" && hits[w.target] > 0:
					s[w.target] = min(s[w.target], w.w)
				case agg == "MAX" && hits[w.target] > 0:
					s[w.target] = max(s[w.target], w.w)
				case agg == "MIN" || agg == "MAX":
					s[w.target] = w.w
				default:
					s[w.target] += w.w
				}
				hits[w.target]++
			}
		}
		for k := range s {
			if agg == "AVERAGE" && len(e.roots) > 0 {
				s[k] /= float64(len(e.roots))
			}
			if len(base) != 0 {
				s[k] += float64(base[k])
			}
		}
	}
	return out, nil
}

// treeRegressorKernel is TreeEnsembleRegressor: [N, n_targets] aggregated
// (SUM, AVERAGE, MIN or MAX) leaf weights plus base_values, after
// post_transform.
func treeRegressorKernel(c *Call) error {
	_, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.TreeEnsembleRegressorParams](c.Node, c.Opset)
	targets := int(p.NTargets)
	if targets < 1 {
		return c.Errorf("n_targets %d", targets)
	}
	agg := p.AggregateFunction
	switch agg {
	case "SUM", "AVERAGE", "MIN", "MAX":
	default:
		return c.Errorf("aggregate_function %q", agg)
	}
	w := treeWeights{p.TargetTreeids, p.TargetNodeids, p.TargetIds, treeFloats(p.TargetWeights, p.TargetWeightsAsTensor)}
	e, err := parseTrees(c, &p.TreeNodes, w, "target", targets)
	if err != nil {
		return err
	}
	s, err := e.scores(c, &p.TreeNodes, v, n, cols, targets, agg)
	if err != nil {
		return err
	}
	if err := postTransform(c, p.PostTransform, s, targets); err != nil {
		return err
	}
	mlFloatOutput(c, 0, []int64{int64(n), int64(targets)}, s)
	return nil
}

// treeClassifierKernel is TreeEnsembleClassifier: summed class weights
// plus base_values; the label of the best class and the scores after
// post_transform. Weights all on class 0 with two labels make a binary
// classifier, as for LinearClassifier.
func treeClassifierKernel(c *Call) error {
	_, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.TreeEnsembleClassifierParams](c.Node, c.Opset)
	labels := max(len(p.ClasslabelsInt64s), len(p.ClasslabelsStrings))
	classes := labels
	if labels == 2 && treeAllZero(p.ClassIds) {
		classes = 1
	}
	w := treeWeights{p.ClassTreeids, p.ClassNodeids, p.ClassIds, treeFloats(p.ClassWeights, p.ClassWeightsAsTensor)}
	e, err := parseTrees(c, &p.TreeNodes, w, "class", classes)
	if err != nil {
		return err
	}
	s, err := e.scores(c, &p.TreeNodes, v, n, cols, classes, "SUM")
	if err != nil {
		return err
	}
	return classify(c, p.ClasslabelsInt64s, p.ClasslabelsStrings, p.PostTransform, s, n, classes)
}

// treeAllZero reports whether every value is 0.
func treeAllZero(v []int64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
