package hostfallback

import (
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func ewStringsAttr(name string, v ...string) *graph.Attribute {
	a := &graph.Attribute{Name: name, Type: graph.AttrStrings}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

func checkStrings(t *testing.T, name string, got *graph.Tensor, shape []int64, want ...string) {
	t.Helper()
	if got.DType != graph.String || !slices.Equal(got.Shape, shape) || !slices.Equal(got.Strings, want) {
		t.Errorf("%s: %s %v %q, want %v %q", name, got.DType, got.Shape, got.Strings, shape, want)
	}
}

func TestStringNormalizer(t *testing.T) {
	x := ewStrings(ewShape(4), "Monday", "tuesday", "monday", "Ärger")
	stop := ewStringsAttr("stopwords", "monday")
	y := ewRun(t, "StringNormalizer", 10, ewWith(stop, ewString("case_change_action", "UPPER")), x)
	checkStrings(t, "insensitive", y, ewShape(2), "TUESDAY", "ÄRGER")
	y = ewRun(t, "StringNormalizer", 10, ewWith(stop, ewInt("is_case_sensitive", 1), ewString("case_change_action", "LOWER")), x)
	checkStrings(t, "sensitive", y, ewShape(3), "monday", "tuesday", "ärger")
	y = ewRun(t, "StringNormalizer", 10, ewWith(stop), ewStrings(ewShape(1, 2), "monday", "MONDAY"))
	checkStrings(t, "empty", y, ewShape(1, 1), "")
	ewFails(t, "StringNormalizer", 10, nil, ewStrings(ewShape(2, 1), "a", "b"))
	ewFails(t, "StringNormalizer", 10, ewWith(ewString("case_change_action", "TITLE")), x)
}

func TestTfIdfVectorizer(t *testing.T) {
	// The spec's example: pool [94, 17, 17, 36] holds the 2-grams
	// (94, 17) and (17, 36), counted in columns 1 and 0.
	x := ewT(graph.Int32, ewShape(2, 5), int32(94), 17, 36, 12, 28, 17, 36, 17, 36, 94)
	attrs := ewWith(ewString("mode", "TF"), ewInt("min_gram_length", 2), ewInt("max_gram_length", 2),
		ewInt("max_skip_count", 0), ewInts("ngram_counts", 0, 0), ewInts("ngram_indexes", 1, 0),
		ewInts("pool_int64s", 94, 17, 17, 36))
	y := ewRun(t, "TfIdfVectorizer", 9, attrs, x)
	ewCheck(t, "TF", y, graph.Float, ewShape(2, 2), []float64{1, 1, 2, 0}, 0)
	// Skip 2 pairs 94 with 12 and 17 with 28.
	attrs["max_skip_count"] = ewInt("max_skip_count", 2)
	attrs["pool_int64s"] = ewInts("pool_int64s", 94, 12, 17, 28)
	y = ewRun(t, "TfIdfVectorizer", 9, attrs, ewT(graph.Int64, ewShape(5), int64(94), 17, 36, 12, 28))
	ewCheck(t, "skip", y, graph.Float, ewShape(2), []float64{1, 1}, 0)
	// Unigrams and bigrams of strings, IDF with weights.
	sattrs := ewWith(ewString("mode", "IDF"), ewInt("min_gram_length", 1), ewInt("max_gram_length", 2),
		ewInt("max_skip_count", 0), ewInts("ngram_counts", 0, 2), ewInts("ngram_indexes", 0, 1, 2),
		ewStringsAttr("pool_strings", "a", "b", "a", "b"),
		&graph.Attribute{Name: "weights", Type: graph.AttrFloats, Floats: []float32{2, 3, 4}})
	y = ewRun(t, "TfIdfVectorizer", 9, sattrs, ewStrings(ewShape(4), "a", "b", "a", "b"))
	ewCheck(t, "IDF", y, graph.Float, ewShape(3), []float64{2, 3, 4}, 0)
	sattrs["mode"] = ewString("mode", "TFIDF")
	y = ewRun(t, "TfIdfVectorizer", 9, sattrs, ewStrings(ewShape(4), "a", "b", "a", "b"))
	ewCheck(t, "TFIDF", y, graph.Float, ewShape(3), []float64{4, 6, 8}, 0)
	sattrs["ngram_counts"] = ewInts("ngram_counts", 0, 3)
	ewFails(t, "TfIdfVectorizer", 9, sattrs, ewStrings(ewShape(4), "a", "b", "a", "b"))
}

func TestStringConcat(t *testing.T) {
	y := ewRun(t, "StringConcat", 20, nil, ewStrings(ewShape(2, 1), "a", "b"), ewStrings(ewShape(3), "x", "y", ""))
	checkStrings(t, "broadcast", y, ewShape(2, 3), "ax", "ay", "a", "bx", "by", "b")
	y = ewRun(t, "StringConcat", 20, nil, ewStrings(ewShape(), "s"), ewStrings(ewShape(), "t"))
	checkStrings(t, "scalar", y, ewShape(), "st")
	ewFails(t, "StringConcat", 20, nil, ewStrings(ewShape(2), "a", "b"), ewStrings(ewShape(3), "x", "y", "z"))
}

func TestRegexFullMatch(t *testing.T) {
	x := ewStrings(ewShape(3), "www.google.com", "www.facebook.com", "www.bbc.co.uk")
	y := ewRun(t, "RegexFullMatch", 20, ewWith(ewString("pattern", `www\.[\w.-]+\.\bcom\b`)), x)
	ewCheck(t, "match", y, graph.Bool, ewShape(3), []float64{1, 1, 0}, 0)
	y = ewRun(t, "RegexFullMatch", 20, ewWith(ewString("pattern", `a|ab`)), ewStrings(ewShape(1), "ab"))
	ewCheck(t, "full", y, graph.Bool, ewShape(1), []float64{1}, 0)
	ewFails(t, "RegexFullMatch", 20, ewWith(ewString("pattern", `(`)), x)
}

func TestStringSplit(t *testing.T) {
	x := ewStrings(ewShape(3), "a,b,c", "d", "")
	out := xOK(t, "", "StringSplit", 20, ewWith(ewString("delimiter", ",")), 2, x)
	checkStrings(t, "pieces", out[0], ewShape(3, 3), "a", "b", "c", "d", "", "", "", "", "")
	ewCheck(t, "counts", out[1], graph.Int64, ewShape(3), []float64{3, 1, 1}, 0)
	out = xOK(t, "", "StringSplit", 20, ewWith(ewInt("maxsplit", 1)), 2, ewStrings(ewShape(2), "  one two  three ", "   "))
	checkStrings(t, "whitespace", out[0], ewShape(2, 2), "one", "two  three ", "", "")
	ewCheck(t, "ws counts", out[1], graph.Int64, ewShape(2), []float64{2, 0}, 0)
}
