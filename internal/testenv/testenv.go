// Package testenv lets tests skip when an optional tool is missing, except
// in CI, where ONNXVK_REQUIRE_TOOLS=1 turns every such skip into a failure
// so that a missing install step cannot hide behind a green run.
package testenv

import (
	"os"
	"testing"
)

// Skip skips the test with reason, or fails it when ONNXVK_REQUIRE_TOOLS is
// set.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("ONNXVK_REQUIRE_TOOLS") != "" {
		t.Fatalf("required tool missing (ONNXVK_REQUIRE_TOOLS is set): %s", reason)
	}
	t.Skip(reason)
}
