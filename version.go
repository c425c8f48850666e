package onnxvk

import (
	"fmt"
	"runtime/debug"
)

// modulePath is onnxvk's module path.
const modulePath = "github.com/onnxvk/onnxvk"

// BuildInfo describes the onnxvk a program was built with.
type BuildInfo struct {
	// Version is onnxvk's module version: a release tag, a pseudo-version,
	// or "(devel)" when onnxvk is the main module built from a checkout.
	Version string `json:"version"`
	// Revision is the VCS revision of a build from a checkout ("" when
	// unknown), Modified whether the checkout had uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the program.
	GoVersion string `json:"go_version"`
}

// Build returns the build information of the running program's onnxvk.
func Build() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{Version: "unknown"}
	}
	b := BuildInfo{Version: "unknown", GoVersion: bi.GoVersion}
	if bi.Main.Path == modulePath {
		b.Version = bi.Main.Version
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				b.Revision = kv.Value
			case "vcs.modified":
				b.Modified = kv.Value == "true"
			}
		}
		return b
	}
	for _, dep := range bi.Deps {
		if dep.Path == modulePath {
			b.Version = dep.Version
			if dep.Replace != nil {
				b.Version += " => " + dep.Replace.Path + " " + dep.Replace.Version
			}
		}
	}
	return b
}

// String formats b on one line: "onnxvk VERSION (REVISION[, modified]) GOVERSION".
func (b BuildInfo) String() string {
	s := "onnxvk " + b.Version
	if b.Revision != "" {
		s += " (" + b.Revision
		if b.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return fmt.Sprintf("%s %s", s, b.GoVersion)
}
