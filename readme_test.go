package onnxvk_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEOptions checks that the README names every Option the package
// exports.
func TestREADMEOptions(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	options := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
				continue
			}
			if id, ok := fn.Type.Results.List[0].Type.(*ast.Ident); ok && id.Name == "Option" {
				options++
				require.Contains(t, string(readme), "`"+fn.Name.Name, "the README does not name option %s", fn.Name.Name)
			}
		}
	}
	require.Positive(t, options)
}
