package serve

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPublicAPIOnly: package serve and its client import no package of
// the module but the root package (the public Go API) and serve/kservepb.
func TestPublicAPIOnly(t *testing.T) {
	const module = "github.com/onnxvk/onnxvk"
	allowed := map[string]bool{module: true, module + "/serve": true, module + "/serve/kservepb": true}
	for _, dir := range []string{".", "client"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		files := 0
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			files++
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range f.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				if strings.HasPrefix(path, module+"/") || path == module {
					require.True(t, allowed[path], "%s/%s imports %s", dir, e.Name(), path)
				}
			}
		}
		require.Positive(t, files, dir)
	}
}
