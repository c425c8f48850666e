package ops

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

var updateParams = flag.Bool("update-params", false, "rewrite params_gen.go from the catalog")

// TestParamsGenerated checks that params_gen.go is what the catalog
// gives; with -update-params (go generate) it rewrites the file.
func TestParamsGenerated(t *testing.T) {
	src, err := generateParams()
	if err != nil {
		t.Fatal(err)
	}
	if *updateParams {
		if err := os.WriteFile("params_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile("params_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, src) {
		t.Fatal("params_gen.go differs from the catalog: run go generate ./graph/ops")
	}
}

// paramGroups are the attribute groups that several ops share, embedded
// in the parameters of every op that has a group's attributes with these
// Go types (those whose type starts with "?" may be missing, and read as
// their zero value), in this order (an attribute joins one group at
// most).
var paramGroups = []struct {
	name  string
	attrs []string
	types []string
	doc   string
}{
	{"Window", []string{"auto_pad", "dilations", "kernel_shape", "pads", "strides"},
		[]string{"?string", "?[]int64", "[]int64", "[]int64", "[]int64"}, "the window of a convolution or pooling"},
	{"LegacyBroadcast", []string{"axis", "broadcast"}, []string{"*int64", "int64"},
		"the broadcasting of a binary op before opset 7"},
	{"ArgReduce", []string{"axis", "keepdims", "select_last_index"}, []string{"int64", "int64", "int64"},
		"the reduction of ArgMax or ArgMin"},
	{"Reduction", []string{"keepdims", "noop_with_empty_axes"}, []string{"int64", "int64"}, "a Reduce op's options"},
	{"Normalization", []string{"axis", "epsilon", "stash_type"}, []string{"int64", "float32", "int64"},
		"a layer normalization's axis, epsilon and precision"},
	{"Loss", []string{"ignore_index", "reduction"}, []string{"*int64", "string"}, "a loss's ignored class and reduction"},
	{"ReductionMode", []string{"reduction"}, []string{"string"}, "a scatter's reduction"},
	{"SignalWindow", []string{"output_datatype", "periodic"}, []string{"int64", "int64"}, "a window function's type and periodicity"},
	{"Quantization", []string{"axis", "block_size", "output_dtype"}, []string{"int64", "int64", "int64"},
		"the quantization axis, block and output type of QuantizeLinear and DequantizeLinear"},
	{"Recurrent", []string{"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"},
		[]string{"[]float32", "[]float32", "[]string", "*float32", "string", "*int64", "int64"}, "the cell options of RNN, GRU and LSTM"},
	{"ConvGroup", []string{"group"}, []string{"int64"}, "a convolution's group count"},
	{"AxisParam", []string{"axis"}, []string{"int64"}, "an op's axis"},
	{"TreeNodes", []string{"base_values", "base_values_as_tensor", "nodes_falsenodeids", "nodes_featureids",
		"nodes_hitrates", "nodes_hitrates_as_tensor", "nodes_missing_value_tracks_true", "nodes_modes", "nodes_nodeids",
		"nodes_treeids", "nodes_truenodeids", "nodes_values", "nodes_values_as_tensor"},
		[]string{"[]float32", "*graph.Tensor", "[]int64", "[]int64", "[]float32", "*graph.Tensor", "[]int64", "[]string",
			"[]int64", "[]int64", "[]int64", "[]float32", "*graph.Tensor"},
		"the nodes and base values of a tree ensemble"},
}

// skippedAttrs are attributes no version gives a meaning to.
var skippedAttrs = map[string]bool{
	// consumed_inputs was a hint for the memory planner of ONNX's first
	// opset; no kernel reads it.
	"consumed_inputs": true,
}

// paramField is one field of a parameter struct.
type paramField struct {
	attr   string
	typ    graph.AttrType
	field  string
	opt    bool // a scalar some version leaves without a default
	goType string
	reader string
}

func (f paramField) same(g paramField) bool {
	return f.attr == g.attr && f.goType == g.goType
}

// goName spells an attribute name in Go's style: auto_pad is AutoPad.
func goName(attr string) string {
	var b strings.Builder
	for _, part := range strings.Split(attr, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

var attrGoTypes = map[graph.AttrType][2]string{
	graph.AttrFloat:        {"float32", "float"},
	graph.AttrInt:          {"int64", "int"},
	graph.AttrString:       {"string", "string"},
	graph.AttrInts:         {"[]int64", "ints"},
	graph.AttrFloats:       {"[]float32", "floats"},
	graph.AttrStrings:      {"[]string", "strings"},
	graph.AttrTensor:       {"*graph.Tensor", "tensor"},
	graph.AttrTensors:      {"[]*graph.Tensor", "tensors"},
	graph.AttrSparseTensor: {"*graph.SparseTensor", "sparseTensor"},
	graph.AttrGraph:        {"*graph.Graph", "graph"},
	graph.AttrGraphs:       {"[]*graph.Graph", "graphs"},
	graph.AttrTypeProto:    {"*graph.Type", "typeProto"},
}

// opFields returns the fields of the parameters of an op with the given
// versions: every attribute of any version, sorted by name; an attribute
// whose type changed keeps its newest type under its name and its older
// one under the name with the type appended. A scalar is a pointer when
// the newest version that has it gives it no default.
func opFields(versions []*Schema) ([]paramField, error) {
	byName := map[string]*paramField{}
	var older []paramField
	for i := len(versions) - 1; i >= 0; i-- {
		for _, a := range versions[i].Attrs {
			if skippedAttrs[a.Name] {
				continue
			}
			gt, ok := attrGoTypes[a.Type]
			if !ok {
				return nil, fmt.Errorf("%s %s: attribute %s of type %v has no Go type", versions[i].Name, domainName(versions[i].Domain), a.Name, a.Type)
			}
			scalar := a.Type == graph.AttrInt || a.Type == graph.AttrFloat || a.Type == graph.AttrString
			opt := scalar && !a.Required && a.Default == nil
			f, ok := byName[a.Name]
			switch {
			case !ok:
				byName[a.Name] = &paramField{attr: a.Name, typ: a.Type, field: goName(a.Name), opt: opt, goType: gt[0], reader: gt[1]}
			case f.typ == a.Type:
			case !slices.ContainsFunc(older, func(o paramField) bool { return o.attr == a.Name && o.typ == a.Type }):
				older = append(older, paramField{attr: a.Name, typ: a.Type, field: goName(a.Name) + goName(a.Type.String()),
					opt: opt, goType: gt[0], reader: gt[1]})
			}
		}
	}
	var out []paramField
	for _, f := range byName {
		out = append(out, *f)
	}
	out = append(out, older...)
	for i := range out {
		if out[i].opt {
			out[i].goType = "*" + out[i].goType
			out[i].reader = "opt" + goName(out[i].reader)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].field < out[j].field })
	return out, nil
}

// paramStruct is one generated struct: an op's parameters, shared by the
// ops of that name in every domain.
type paramStruct struct {
	name    string
	domains []string
	groups  []string
	fields  []paramField
}

func generateParams() ([]byte, error) {
	mu.RLock()
	keys := make([]key, 0, len(registry))
	for k := range registry {
		keys = append(keys, k)
	}
	mu.RUnlock()
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return keys[i].domain < keys[j].domain
	})

	groupFields := map[string][]paramField{}
	var structs []*paramStruct
	byName := map[string]*paramStruct{}
	for _, k := range keys {
		fields, err := opFields(Versions(k.domain, k.name))
		if err != nil {
			return nil, err
		}
		if len(fields) == 0 {
			continue
		}
		var groups []string
		for _, g := range paramGroups {
			var in []paramField
			ok := true
			for j, a := range g.attrs {
				typ, optional := strings.CutPrefix(g.types[j], "?")
				i := slices.IndexFunc(fields, func(f paramField) bool { return f.attr == a && f.goType == typ })
				switch {
				case i >= 0:
					in = append(in, fields[i])
				case !optional:
					ok = false
				}
			}
			if !ok {
				continue
			}
			if known := groupFields[g.name]; len(in) > len(known) {
				groupFields[g.name] = in
			}
			groups = append(groups, g.name)
			fields = slices.DeleteFunc(fields, func(f paramField) bool { return slices.Contains(g.attrs, f.attr) })
		}
		if s, ok := byName[k.name]; ok {
			if !slices.Equal(s.groups, groups) || !slices.EqualFunc(s.fields, fields, paramField.same) {
				return nil, fmt.Errorf("op %s has other attributes in %s than in %s", k.name, domainName(k.domain), domainName(s.domains[0]))
			}
			s.domains = append(s.domains, k.domain)
			continue
		}
		s := &paramStruct{name: k.name, domains: []string{k.domain}, groups: groups, fields: fields}
		byName[k.name] = s
		structs = append(structs, s)
	}

	var b bytes.Buffer
	b.WriteString("// Code generated by TestParamsGenerated (go generate ./graph/ops) from the catalog; DO NOT EDIT.\n\n")
	b.WriteString("package ops\n\nimport \"github.com/onnxvk/onnxvk/graph\"\n\n")
	for _, g := range paramGroups {
		fields := groupFields[g.name]
		if fields == nil {
			return nil, fmt.Errorf("parameter group %s has no op", g.name)
		}
		lower := strings.ToLower(g.name[:1]) + g.name[1:]
		fmt.Fprintf(&b, "// %s holds %s: the attributes %s.\ntype %s struct {\n", g.name, g.doc, strings.Join(g.attrs, ", "), g.name)
		writeFields(&b, fields)
		fmt.Fprintf(&b, "}\n\nfunc (p *%s) read(r *attrReader) {\n", g.name)
		writeReads(&b, fields)
		fmt.Fprintf(&b, "}\n\nfunc (p *%s) %s() *%s { return p }\n\n", g.name, lower, g.name)
		fmt.Fprintf(&b, "// %sOf returns the %s of n's parameters (Params), or nil when n's op has none.\n", g.name, g.name)
		fmt.Fprintf(&b, "func %sOf(n *graph.Node, opset int64) *%s {\n", g.name, g.name)
		fmt.Fprintf(&b, "\tif p, ok := ParamsOf(n, opset).(interface{ %s() *%s }); ok {\n\t\treturn p.%s()\n\t}\n\treturn nil\n}\n\n", lower, g.name, lower)
	}
	for _, s := range structs {
		var ds []string
		for _, d := range s.domains {
			ds = append(ds, domainName(d))
		}
		fmt.Fprintf(&b, "// %sParams are the attributes of %s (%s).\ntype %sParams struct {\n", s.name, s.name, strings.Join(ds, ", "), s.name)
		for _, g := range s.groups {
			fmt.Fprintf(&b, "\t%s\n", g)
		}
		writeFields(&b, s.fields)
		fmt.Fprintf(&b, "}\n\nfunc (p *%sParams) read(r *attrReader) {\n", s.name)
		for _, g := range s.groups {
			fmt.Fprintf(&b, "\tp.%s.read(r)\n", g)
		}
		writeReads(&b, s.fields)
		b.WriteString("}\n\n")
	}
	b.WriteString("// paramTypes makes the parameters of each op.\nvar paramTypes = map[key]func() paramSet{\n")
	for _, s := range structs {
		for _, d := range s.domains {
			fmt.Fprintf(&b, "\t{%q, %q}: func() paramSet { return new(%sParams) },\n", d, s.name, s.name)
		}
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func writeFields(b *bytes.Buffer, fields []paramField) {
	for _, f := range fields {
		fmt.Fprintf(b, "\t%s %s // %s\n", f.field, f.goType, f.attr)
	}
}

func writeReads(b *bytes.Buffer, fields []paramField) {
	for _, f := range fields {
		fmt.Fprintf(b, "\tr.%s(%q, &p.%s)\n", f.reader, f.attr, f.field)
	}
}
