// Command gen writes docs/OPERATORS.md (see package opstable); go generate
// runs it in internal/opstable.
package main

import (
	"log"
	"os"
	"path/filepath"

	"github.com/onnxvk/onnxvk/internal/opstable"
)

func main() {
	md, err := opstable.Markdown()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", opstable.Path), []byte(md), 0o644); err != nil {
		log.Fatal(err)
	}
}
