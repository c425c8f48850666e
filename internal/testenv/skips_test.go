package testenv_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSkipsGoThroughTestenv parses the module's Go files that import
// testing and fails on any use of a Skip, Skipf or SkipNow method outside
// package testenv: a plain t.Skip would bypass ONNXVK_REQUIRE_TOOLS, so
// every skip goes through one of testenv's helpers.
func TestSkipsGoThroughTestenv(t *testing.T) {
	const self = "github.com/onnxvk/onnxvk/internal/testenv"
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not two folders up: %v", err)
	}
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte("Skip")) {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		helpers, usesTesting := "", false
		for _, imp := range f.Imports {
			switch p, _ := strconv.Unquote(imp.Path.Value); {
			case p == "testing":
				usesTesting = true
			case p == self && imp.Name != nil:
				helpers = imp.Name.Name
			case p == self:
				helpers = "testenv"
			}
		}
		if !usesTesting || f.Name.Name == "testenv" {
			return nil
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Skip" && sel.Sel.Name != "Skipf" && sel.Sel.Name != "SkipNow") {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && helpers != "" && x.Name == helpers {
				return true
			}
			t.Errorf("%s: a plain %s: skip through internal/testenv (Skip for a missing tool, driver, device feature, file or disk space; SkipShort, SkipLong, SkipUnlessEnv, SkipDeclined)",
				fset.Position(sel.Pos()), sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no file that skips was checked")
	}
}
