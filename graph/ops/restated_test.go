package ops

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// consumerDirs are the folders, from the module's root, of the code that
// consumes attributes: kernels, lowerings, passes, shape rules.
var consumerDirs = []string{"graph/ops", "hostfallback", "backend/vulkan", "planner", "internal/kerneltest"}

// attrGetters are graph.Node's by-name attribute reads, each taking the
// default to return when the attribute is absent, and the shape rules'
// former wrappers of them.
var attrGetters = map[string]bool{
	"AttrInt": true, "AttrFloat": true, "AttrString": true,
	"AttrInts": true, "AttrFloats": true, "AttrStrings": true,
	"attrInt": true, "attrInts": true,
}

// catalogFiles are the files of graph/ops that hold or read the catalog's
// defaults: the one place a default may be written.
func catalogFile(name string) bool {
	return strings.HasPrefix(name, "catalog") || strings.HasPrefix(name, "params")
}

// attrReads lists, as "file:line: call", every by-name attribute read
// with a fallback (node.AttrInt(name, def) and the like) in the non-test
// Go files of consumerDirs, and how many of them give a fallback other
// than nil: a default restated outside the catalog.
func attrReads(t *testing.T, root string) (reads []string, restated int) {
	fset := token.NewFileSet()
	for _, dir := range consumerDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			name := filepath.Base(path)
			if strings.HasSuffix(name, "_test.go") || dir == "graph/ops" && catalogFile(name) {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(x ast.Node) bool {
				call, ok := x.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !attrGetters[sel.Sel.Name] {
					return true
				}
				pos := fset.Position(call.Pos())
				rel, _ := filepath.Rel(root, pos.Filename)
				def := "nil"
				if id, ok := call.Args[1].(*ast.Ident); !ok || id.Name != "nil" {
					def = "default"
					restated++
				}
				reads = append(reads, fmt.Sprintf("%s:%d: %s (%s)", filepath.ToSlash(rel), pos.Line, sel.Sel.Name, def))
				return true
			})
		}
	}
	sort.Strings(reads)
	return reads, restated
}

// TestNoRestatedDefaults fails when a kernel, lowering, pass or shape rule
// reads an attribute by name with a fallback instead of from the node's
// typed parameters (Params, WindowOf, ...): the fallback restates the
// catalog's default, or hides that the catalog has none. Run with -v for
// the count.
func TestNoRestatedDefaults(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	reads, restated := attrReads(t, root)
	t.Logf("%d by-name attribute reads, %d with a default other than nil", len(reads), restated)
	for _, r := range reads {
		t.Errorf("%s: read the node's typed parameters instead", r)
	}
}
