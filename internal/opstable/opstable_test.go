package opstable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpToDate fails while the committed docs/OPERATORS.md differs from
// what the registries give now.
func TestUpToDate(t *testing.T) {
	want, err := Markdown()
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join("..", "..", Path))
	require.NoError(t, err)
	if string(got) != want {
		t.Fatalf("%s is stale: run go generate ./internal/opstable and commit it", Path)
	}
}

// TestRows spot-checks rows against what the registries say elsewhere:
// Conv runs on both devices, the CPU's MatMul takes the product types,
// an op with a schema and no kernel says so.
func TestRows(t *testing.T) {
	md, err := Markdown()
	require.NoError(t, err)
	row := func(op string) string {
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| "+op+" |") {
				return line
			}
		}
		t.Fatalf("no row for %s", op)
		return ""
	}
	require.Contains(t, row("Conv"), "| yes; tested: float32")
	require.Contains(t, row("MatMul"), "int64")
	require.Regexp(t, `\| Transpose \|.*declines: .*int64 Transpose runs on the CPU`, row("Transpose"))
}
