package hostfallback

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Text ops: StringNormalizer, TfIdfVectorizer, StringConcat, RegexFullMatch
// and StringSplit. Case mapping is Unicode's simple mapping; the locale
// attribute of StringNormalizer is ignored.

func init() {
	Register("StringNormalizer", stringNormalizerKernel)
	Register("TfIdfVectorizer", tfIdfKernel)
	Register("StringConcat", stringConcatKernel)
	Register("RegexFullMatch", regexFullMatchKernel)
	Register("StringSplit", stringSplitKernel)
}

// stringInput returns input i, which must be a string tensor.
func stringInput(c *Call, i int) (*graph.Tensor, error) {
	t, err := inputTensor(c, i)
	if err != nil {
		return nil, err
	}
	if t.DType != graph.String {
		return nil, c.Errorf("input %d is %s, want string", i, t.DType)
	}
	return t, nil
}

// stringNormalizerKernel is StringNormalizer: it drops the stop words from
// a [C] or [1, C] tensor, then changes the case of the rest. When every
// word is dropped the output holds one empty string.
func stringNormalizerKernel(c *Call) error {
	x, err := stringInput(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() != 1 && (x.Rank() != 2 || x.Shape[0] != 1) {
		return c.Errorf("input shape %v, want [C] or [1, C]", x.Shape)
	}
	p := ops.Params[ops.StringNormalizerParams](c.Node, c.Opset)
	sensitive := p.IsCaseSensitive != 0
	stop := map[string]bool{}
	for _, w := range p.Stopwords {
		if !sensitive {
			w = strings.ToLower(w)
		}
		stop[w] = true
	}
	var change func(string) string
	switch a := p.CaseChangeAction; a {
	case "NONE":
	case "LOWER":
		change = strings.ToLower
	case "UPPER":
		change = strings.ToUpper
	default:
		return c.Errorf("case_change_action %q", a)
	}
	var kept []string
	for _, s := range x.Strings {
		key := s
		if !sensitive {
			key = strings.ToLower(s)
		}
		if stop[key] {
			continue
		}
		if change != nil {
			s = change(s)
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		kept = []string{""}
	}
	shape := []int64{int64(len(kept))}
	if x.Rank() == 2 {
		shape = []int64{1, int64(len(kept))}
	}
	copy(c.Output(0, graph.String, shape).Strings, kept)
	return nil
}

// tfIdfKernel is TfIdfVectorizer. The pool holds the n-grams of each
// length n in turn, those of length n starting at ngram_counts[n-1]; the
// i-th n-gram of the pool is counted in output column ngram_indexes[i].
func tfIdfKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.TfIdfVectorizerParams](c.Node, c.Opset)
	minN, maxN := p.MinGramLength, p.MaxGramLength
	maxSkip := p.MaxSkipCount
	counts := p.NgramCounts
	indexes := p.NgramIndexes
	weights := p.Weights
	if minN < 1 || maxN < minN || maxSkip < 0 || int64(len(counts)) < maxN {
		return c.Errorf("gram lengths [%d, %d], skip %d and %d ngram_counts are inconsistent", minN, maxN, maxSkip, len(counts))
	}
	// IDF caps the counts at 1; IDF and TFIDF then scale them by weights.
	mode := p.Mode
	if mode != "TF" && mode != "IDF" && mode != "TFIDF" {
		return c.Errorf("mode %q", mode)
	}
	// Every token and pool entry becomes a string key, so one code path
	// serves the integer and string forms.
	var tokens []string
	var pool []string
	if x.DType == graph.String {
		tokens, pool = x.Strings, p.PoolStrings
	} else {
		ints, err := indexValues(c, x)
		if err != nil {
			return err
		}
		tokens = intKeys(ints)
		pool = intKeys(p.PoolInt64s)
	}
	// gram maps an n-gram (its tokens joined by NUL) to its pool index.
	gram := map[string]int{}
	idx := 0
	for g := range counts {
		lo, hi := int(counts[g]), len(pool)
		if g+1 < len(counts) {
			hi = int(counts[g+1])
		}
		if lo < 0 || hi > len(pool) || lo > hi || (hi-lo)%(g+1) != 0 {
			return c.Errorf("ngram_counts %v do not split a pool of %d", counts, len(pool))
		}
		for p := lo; p < hi; p += g + 1 {
			gram[strings.Join(pool[p:p+g+1], "\x00")] = idx
			idx++
		}
	}
	if len(indexes) != idx || (len(weights) != 0 && len(weights) != idx) {
		return c.Errorf("%d ngram_indexes and %d weights for %d pool n-grams", len(indexes), len(weights), idx)
	}
	width := int64(0)
	for _, i := range indexes {
		if i < 0 {
			return c.Errorf("negative ngram index %d", i)
		}
		width = max(width, i+1)
	}
	var rows, cols int64
	var shape []int64
	switch x.Rank() {
	case 1:
		rows, cols, shape = 1, x.Shape[0], []int64{width}
	case 2:
		rows, cols, shape = x.Shape[0], x.Shape[1], []int64{x.Shape[0], width}
	default:
		return c.Errorf("input of rank %d, want 1 or 2", x.Rank())
	}
	y := graph.View[float32](c.Output(0, graph.Float, shape))
	parts := make([]string, maxN)
	for r := range rows {
		row := tokens[r*cols : (r+1)*cols]
		out := y[r*width : (r+1)*width]
		for g := minN; g <= maxN; g++ {
			for skip := int64(0); skip <= maxSkip; skip++ {
				step := skip + 1
				for s := int64(0); s+(g-1)*step < cols; s++ {
					for k := range g {
						parts[k] = row[s+k*step]
					}
					if i, ok := gram[strings.Join(parts[:g], "\x00")]; ok {
						out[indexes[i]]++
					}
				}
				if g == 1 {
					break
				}
			}
		}
		if mode == "TF" {
			continue
		}
		for i, col := range indexes {
			v := out[col]
			if mode == "IDF" {
				v = min(v, 1)
			}
			if len(weights) != 0 {
				v *= weights[i]
			}
			out[col] = v
		}
	}
	return nil
}

// intKeys formats integers as map keys.
func intKeys(v []int64) []string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return s
}

// stringConcatKernel is StringConcat: the elementwise concatenation of two
// string tensors, with multidirectional broadcasting.
func stringConcatKernel(c *Call) error {
	a, err := stringInput(c, 0)
	if err != nil {
		return err
	}
	b, err := stringInput(c, 1)
	if err != nil {
		return err
	}
	shape, err := broadcastShapes(a.Shape, b.Shape)
	if err != nil {
		return c.Errorf("%w", err)
	}
	p, err := newBroadcastPlan(shape, a.Shape, b.Shape)
	if err != nil {
		return c.Errorf("%w", err)
	}
	d := c.Output(0, graph.String, shape).Strings
	p.forEach(c.Threads, func(o int, in *[maxBroadcastInputs]int, n int) {
		for k := range n {
			i, j := in[0], in[1]
			if p.unit[0] {
				i += k
			}
			if p.unit[1] {
				j += k
			}
			d[o+k] = a.Strings[i] + b.Strings[j]
		}
	})
	return nil
}

// regexFullMatchKernel is RegexFullMatch: whether each string matches the
// RE2 pattern in full.
func regexFullMatchKernel(c *Call) error {
	x, err := stringInput(c, 0)
	if err != nil {
		return err
	}
	pat := ""
	if p := ops.Params[ops.RegexFullMatchParams](c.Node, c.Opset).Pattern; p != nil {
		pat = *p
	}
	re, err := regexp.Compile(`^(?:` + pat + `)$`)
	if err != nil {
		return c.Errorf("pattern %q: %w", pat, err)
	}
	y := c.Output(0, graph.Bool, x.Shape)
	for i, s := range x.Strings {
		if re.MatchString(s) {
			y.Data[i] = 1
		}
	}
	return nil
}

// stringSplitKernel is StringSplit: each string split at the delimiter
// (or, without one, at runs of whitespace, dropping empty pieces), at most
// maxsplit times when that is set. Output 0 appends an axis as long as the
// most pieces, padded with empty strings; output 1 counts the pieces.
func stringSplitKernel(c *Call) error {
	x, err := stringInput(c, 0)
	if err != nil {
		return err
	}
	p := ops.Params[ops.StringSplitParams](c.Node, c.Opset)
	delim := ""
	if p.Delimiter != nil {
		delim = *p.Delimiter
	}
	limit := -1
	if p.Maxsplit != nil && *p.Maxsplit >= 0 {
		limit = int(*p.Maxsplit)
	}
	pieces := make([][]string, len(x.Strings))
	width := 0
	for i, s := range x.Strings {
		if delim != "" {
			n := -1
			if limit >= 0 {
				n = limit + 1
			}
			pieces[i] = strings.SplitN(s, delim, n)
		} else {
			pieces[i] = splitSpace(s, limit)
		}
		width = max(width, len(pieces[i]))
	}
	shape := append(append([]int64{}, x.Shape...), int64(width))
	y := c.Output(0, graph.String, shape).Strings
	for i, p := range pieces {
		copy(y[i*width:], p)
	}
	if len(c.Out) > 1 {
		z := graph.View[int64](c.Output(1, graph.Int64, x.Shape))
		for i, p := range pieces {
			z[i] = int64(len(p))
		}
	}
	return nil
}

// splitSpace splits s at runs of whitespace as Python's str.split() does:
// at most limit splits when limit >= 0, the remainder (left-trimmed) being
// the last piece.
func splitSpace(s string, limit int) []string {
	var out []string
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			return out
		}
		if limit >= 0 && len(out) == limit {
			return append(out, s)
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		if end < 0 {
			return append(out, s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
}
