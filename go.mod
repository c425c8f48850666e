module github.com/onnxvk/onnxvk

go 1.26

require (
	github.com/ebitengine/purego v0.11.1
	github.com/stretchr/testify v1.11.1
	github.com/x448/float16 v0.8.4
	google.golang.org/protobuf v1.36.10
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
