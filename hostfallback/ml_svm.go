package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterDomain(ops.DomainML, "SVMRegressor", svmRegressorKernel)
	RegisterDomain(ops.DomainML, "SVMClassifier", svmClassifierKernel)
}

// svmKernel returns the kernel function kernel_type k names, with
// kernel_params p [gamma, coef0, degree].
func svmKernel(c *Call, k string, p []float32) (func(a, b []float64) float64, error) {
	gamma, coef0, degree := 0.0, 0.0, 0.0
	if len(p) > 0 {
		gamma = float64(p[0])
	}
	if len(p) > 1 {
		coef0 = float64(p[1])
	}
	if len(p) > 2 {
		degree = float64(p[2])
	}
	dot := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	switch k {
	case "LINEAR":
		return dot, nil
	case "POLY":
		return func(a, b []float64) float64 { return math.Pow(gamma*dot(a, b)+coef0, degree) }, nil
	case "RBF":
		return func(a, b []float64) float64 {
			s := 0.0
			for i := range a {
				d := a[i] - b[i]
				s += d * d
			}
			return math.Exp(-gamma * s)
		}, nil
	case "SIGMOID":
		return func(a, b []float64) float64 { return math.Tanh(gamma*dot(a, b) + coef0) }, nil
	default:
		return nil, c.Errorf("kernel_type %q", k)
	}
}

// svmRegressorKernel is SVMRegressor: Σ coefficients[j]·K(x, sv_j) + rho
// over the n_supports support vectors, or, without support vectors, the
// linear x·coefficients + rho; one_class maps the score to ±1. The result
// is [N, 1] after post_transform.
func svmRegressorKernel(c *Call) error {
	_, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.SVMRegressorParams](c.Node, c.Opset)
	kern, err := svmKernel(c, p.KernelType, p.KernelParams)
	if err != nil {
		return err
	}
	coef, sv, nsv := p.Coefficients, p.SupportVectors, int(p.NSupports)
	rho := 0.0
	if r := p.Rho; len(r) > 0 {
		rho = float64(r[0])
	}
	if nsv < 0 || nsv > 0 && (len(sv) != nsv*cols || len(coef) != nsv) || nsv == 0 && len(coef) != cols {
		return c.Errorf("%d support vectors, %d coefficients and %d values for %d features", nsv, len(coef), len(sv), cols)
	}
	vecs := make([][]float64, nsv)
	for j := range vecs {
		vecs[j] = make([]float64, cols)
		for i := range cols {
			vecs[j][i] = float64(sv[j*cols+i])
		}
	}
	w := make([]float64, len(coef))
	for i, x := range coef {
		w[i] = float64(x)
	}
	oneClass := p.OneClass != 0
	out := make([]float64, n)
	for r := range n {
		x := v[r*cols : (r+1)*cols]
		s := rho
		if nsv > 0 {
			for j, vec := range vecs {
				s += w[j] * kern(x, vec)
			}
		} else {
			for i := range x {
				s += w[i] * x[i]
			}
		}
		if oneClass && s > 0 {
			s = 1
		} else if oneClass {
			s = -1
		}
		out[r] = s
	}
	if err := postTransform(c, p.PostTransform, out, 1); err != nil {
		return err
	}
	mlFloatOutput(c, 0, []int64{int64(n), 1}, out)
	return nil
}

// svmClassifierKernel is SVMClassifier, as ONNX Runtime computes it. With
// vectors_per_class it is a one-against-one SVC: each pair (i, j) of
// classes scores Σ coef·K(x, sv) over both classes' support vectors plus
// rho, voting for i when positive; the label is the most voted class. The
// scores are the pairwise decision values ([−s, s] for two classes, or
// [1−s, s] after a post_transform), or with prob_a and prob_b the class
// probabilities coupled from the pairwise Platt estimates. Without
// support vectors it is linear: one score x·coefficients_c + rho[0] per
// class.
func svmClassifierKernel(c *Call) error {
	_, v, n, cols, err := mlInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.SVMClassifierParams](c.Node, c.Opset)
	ints, strs := p.ClasslabelsInts, p.ClasslabelsStrings
	classes := max(len(ints), len(strs))
	coef, rho, perClass, probA, probB := p.Coefficients, p.Rho, p.VectorsPerClass, p.ProbA, p.ProbB
	if classes == 0 || len(coef) == 0 || len(rho) == 0 || len(probA) != len(probB) {
		return c.Errorf("%d labels, %d coefficients, %d rho, %d prob_a and %d prob_b", classes, len(coef), len(rho), len(probA), len(probB))
	}
	pairs := classes * (classes - 1) / 2
	allPositive := true
	for _, w := range coef {
		allPositive = allPositive && w >= 0
	}
	var scores []float64
	var width int
	best := make([]int, n)
	bestScore := make([]float64, n)
	if len(perClass) == 0 {
		if len(coef) != classes*cols {
			return c.Errorf("%d coefficients for %d classes of %d features", len(coef), classes, cols)
		}
		width = classes
		scores = make([]float64, n*width)
		for r := range n {
			for k := range classes {
				s := float64(rho[0])
				for j := range cols {
					s += v[r*cols+j] * float64(coef[k*cols+j])
				}
				scores[r*width+k] = s
				if k == 0 || s > bestScore[r] {
					best[r], bestScore[r] = k, s
				}
			}
		}
		if err := postTransform(c, p.PostTransform, scores, width); err != nil {
			return err
		}
	} else {
		if scores, width, err = svcScores(c, p, v, n, cols, classes, best); err != nil {
			return err
		}
	}
	if pairs == 1 && len(perClass) == 0 {
		// ONNX Runtime's binary rule for the linear form.
		for r := range n {
			if allPositive && bestScore[r] >= 0.5 || !allPositive && bestScore[r] > 0 {
				best[r] = 1
			}
		}
	}
	if len(strs) > 0 {
		y := c.Output(0, graph.String, []int64{int64(n)})
		for r, b := range best {
			y.Strings[r] = strs[b]
		}
	} else {
		y := graph.View[int64](c.Output(0, graph.Int64, []int64{int64(n)}))
		for r, b := range best {
			y[r] = ints[b]
		}
	}
	if len(c.Out) > 1 {
		mlFloatOutput(c, 1, []int64{int64(n), int64(width)}, scores)
	}
	return nil
}

// svcScores evaluates the one-against-one SVC p: it sets best to each
// row's most voted class and returns the scores and their width.
func svcScores(c *Call, p *ops.SVMClassifierParams, v []float64, n, cols, classes int, best []int) ([]float64, int, error) {
	kern, err := svmKernel(c, p.KernelType, p.KernelParams)
	if err != nil {
		return nil, 0, err
	}
	perClass, coef, rho, probA, probB, sv := p.VectorsPerClass, p.Coefficients, p.Rho, p.ProbA, p.ProbB, p.SupportVectors
	start := make([]int, len(perClass))
	total := 0
	for i, k := range perClass {
		if k < 0 {
			return nil, 0, c.Errorf("vectors_per_class %v", perClass)
		}
		start[i] = total
		total += int(k)
	}
	pairs := classes * (classes - 1) / 2
	proba := len(probA) > 0
	if len(perClass) != classes || total == 0 || len(sv) != total*cols || len(coef) < (classes-1)*total ||
		len(rho) < pairs || proba && len(probA) < pairs {
		return nil, 0, c.Errorf("vectors_per_class %v, %d support values, %d coefficients, %d rho for %d classes of %d features",
			perClass, len(sv), len(coef), len(rho), classes, cols)
	}
	width := max(pairs, 2)
	if proba {
		width = classes
	}
	scores := make([]float64, n*width)
	kv := make([]float64, total)
	vec := make([]float64, cols)
	pair := make([]float64, pairs)
	votes := make([]int, classes)
	for r := range n {
		x := v[r*cols : (r+1)*cols]
		for k := range total {
			for j := range cols {
				vec[j] = float64(sv[k*cols+j])
			}
			kv[k] = kern(x, vec)
		}
		clear(votes)
		idx := 0
		for i := 0; i < classes-1; i++ {
			for j := i + 1; j < classes; j++ {
				s := float64(rho[idx])
				for m := range int(perClass[i]) {
					s += float64(coef[(j-1)*total+start[i]+m]) * kv[start[i]+m]
				}
				for m := range int(perClass[j]) {
					s += float64(coef[i*total+start[j]+m]) * kv[start[j]+m]
				}
				pair[idx] = s
				if s > 0 {
					votes[i]++
				} else {
					votes[j]++
				}
				idx++
			}
		}
		for k := range votes {
			if votes[k] > votes[best[r]] {
				best[r] = k
			}
		}
		row := scores[r*width : (r+1)*width]
		switch {
		case proba:
			svcProbabilities(classes, pair, probA, probB, row)
		case pairs == 1:
			// ONNX Runtime's two-class scores: a post_transform other
			// than PROBIT only changes how the pair is written.
			switch p.PostTransform {
			case "NONE":
				row[0], row[1] = -pair[0], pair[0]
			case "PROBIT":
				row[0], row[1] = math.Sqrt2*math.Erfinv(2*pair[0]-1), pair[0]
			default:
				row[0], row[1] = 1-pair[0], pair[0]
			}
		default:
			copy(row, pair)
		}
	}
	if !proba && pairs == 1 {
		// Only check the post_transform name.
		return scores, width, postTransform(c, p.PostTransform, nil, width)
	}
	return scores, width, postTransform(c, p.PostTransform, scores, width)
}

// svcProbabilities couples the pairwise Platt probabilities
// 1 − σ(s·A + B) into class probabilities p, by the iterative method of
// Wu, Lin and Weng that libsvm uses.
func svcProbabilities(k int, pair []float64, probA, probB []float32, p []float64) {
	r := make([]float64, k*k)
	idx := 0
	for i := 0; i < k-1; i++ {
		for j := i + 1; j < k; j++ {
			q := 1 - 1/(1+math.Exp(-(pair[idx]*float64(probA[idx])+float64(probB[idx]))))
			q = min(max(q, 1e-7), 1-1e-7)
			r[i*k+j], r[j*k+i] = q, 1-q
			idx++
		}
	}
	qm := make([]float64, k*k)
	for i := range k {
		p[i] = 1 / float64(k)
		for j := range i {
			qm[i*k+i] += r[j*k+i] * r[j*k+i]
			qm[i*k+j] = qm[j*k+i]
		}
		for j := i + 1; j < k; j++ {
			qm[i*k+i] += r[j*k+i] * r[j*k+i]
			qm[i*k+j] = -r[j*k+i] * r[i*k+j]
		}
	}
	qp := make([]float64, k)
	eps := 0.005 / float64(k)
	for range 100 {
		pqp := 0.0
		for i := range k {
			qp[i] = 0
			for j := range k {
				qp[i] += qm[i*k+j] * p[j]
			}
			pqp += p[i] * qp[i]
		}
		maxErr := 0.0
		for i := range k {
			maxErr = max(maxErr, math.Abs(qp[i]-pqp))
		}
		if maxErr < eps {
			return
		}
		for i := range k {
			diff := (-qp[i] + pqp) / qm[i*k+i]
			p[i] += diff
			pqp = (pqp + diff*(diff*qm[i*k+i]+2*qp[i])) / (1 + diff) / (1 + diff)
			for j := range k {
				qp[j] = (qp[j] + diff*qm[i*k+j]) / (1 + diff)
				p[j] /= 1 + diff
			}
		}
	}
}
