package onnxvk_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
)

func TestBuildString(t *testing.T) {
	b := onnxvk.Build()
	require.NotEmpty(t, b.Version)
	require.True(t, strings.HasPrefix(b.String(), "onnxvk "+b.Version), b.String())
	require.Equal(t, "onnxvk v1.2.3 (abc, modified) go1.26", onnxvk.BuildInfo{Version: "v1.2.3", Revision: "abc", Modified: true, GoVersion: "go1.26"}.String())
	require.Equal(t, "onnxvk (devel) go1.26", onnxvk.BuildInfo{Version: "(devel)", GoVersion: "go1.26"}.String())
}
