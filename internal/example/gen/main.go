// Command gen writes the built-in example's files: picture.png, a picture
// drawn procedurally, and model.onnx, an edge-detection filter for pictures
// of any size. Both are deterministic: running gen again gives the same
// picture and the same model bytes.
//
// Usage (go generate runs it in internal/example):
//
//	go run ./gen [-out DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

func main() {
	out := flag.String("out", ".", "folder to write picture.png and model.onnx to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	var pic bytes.Buffer
	if err := png.Encode(&pic, draw()); err != nil {
		return fmt.Errorf("encoding the picture: %w", err)
	}
	model, err := proto.MarshalOptions{Deterministic: true}.Marshal(edgeModel())
	if err != nil {
		return fmt.Errorf("encoding the model: %w", err)
	}
	for name, data := range map[string][]byte{"picture.png": pic.Bytes(), "model.onnx": model} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Colours, chosen so that neighbouring shapes differ clearly in brightness
// and their outlines survive the model's conversion to grayscale.
var (
	sky    = color.RGBA{100, 160, 230, 255}
	grass  = color.RGBA{40, 110, 40, 255}
	sun    = color.RGBA{255, 230, 80, 255}
	cloud  = color.RGBA{245, 245, 250, 255}
	wall   = color.RGBA{225, 200, 150, 255}
	roof   = color.RGBA{170, 50, 40, 255}
	door   = color.RGBA{110, 60, 30, 255}
	window = color.RGBA{60, 80, 120, 255}
	path   = color.RGBA{170, 170, 160, 255}
	trunk  = color.RGBA{100, 70, 40, 255}
	leaves = color.RGBA{30, 120, 40, 255}
)

// draw paints a 192×128 landscape: a house with a roof, a door, two windows
// and a path, a tree, the sun and a cloud, over grass.
func draw() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 192, 128))
	fill(img, sky, func(x, y int) bool { return true })
	fill(img, grass, func(x, y int) bool { return y >= 100 })
	fill(img, sun, disc(162, 26, 14))
	fill(img, cloud, union(disc(36, 22, 9), disc(48, 18, 11), disc(60, 23, 8)))
	fill(img, wall, rect(40, 60, 100, 100))
	fill(img, roof, triangle(70, 28, 32, 60, 108, 60))
	fill(img, door, rect(62, 78, 76, 100))
	fill(img, window, union(rect(46, 68, 58, 80), rect(82, 68, 94, 80)))
	fill(img, path, union(triangle(62, 100, 76, 100, 56, 128), triangle(76, 100, 82, 128, 56, 128)))
	fill(img, trunk, rect(129, 72, 139, 100))
	fill(img, leaves, disc(134, 60, 17))
	return img
}

// shape reports whether the pixel whose top-left corner is (x, y) is inside.
type shape func(x, y int) bool

func fill(img *image.RGBA, c color.RGBA, in shape) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if in(x, y) {
				img.SetRGBA(x, y, c)
			}
		}
	}
}

// rect is the pixels x0 <= x < x1, y0 <= y < y1.
func rect(x0, y0, x1, y1 int) shape {
	return func(x, y int) bool { return x >= x0 && x < x1 && y >= y0 && y < y1 }
}

// disc is the pixels whose centres lie within r of (cx, cy).
func disc(cx, cy, r int) shape {
	return func(x, y int) bool {
		dx, dy := 2*(x-cx)+1, 2*(y-cy)+1
		return dx*dx+dy*dy <= 4*r*r
	}
}

// triangle is the pixels whose centres lie inside the triangle with the
// given corners (in either winding) or on its edges.
func triangle(x0, y0, x1, y1, x2, y2 int) shape {
	// Work in doubled coordinates so that pixel centres are integers.
	side := func(ax, ay, bx, by, px, py int) int {
		return (2*bx-2*ax)*(py-2*ay) - (2*by-2*ay)*(px-2*ax)
	}
	return func(x, y int) bool {
		px, py := 2*x+1, 2*y+1
		a := side(x0, y0, x1, y1, px, py)
		b := side(x1, y1, x2, y2, px, py)
		c := side(x2, y2, x0, y0, px, py)
		return (a >= 0 && b >= 0 && c >= 0) || (a <= 0 && b <= 0 && c <= 0)
	}
}

func union(shapes ...shape) shape {
	return func(x, y int) bool {
		for _, s := range shapes {
			if s(x, y) {
				return true
			}
		}
		return false
	}
}

// edgeModel builds the filter: grayscale, 5×5 Gaussian blur, Sobel
// gradients, gradient magnitude clipped to 0..1. The image is padded by
// repeating its border pixels so that the frame of the picture shows no
// edge.
func edgeModel() *onnxpb.ModelProto {
	gaussian := make([]float32, 0, 25)
	binomial := []float32{1, 4, 6, 4, 1}
	for _, a := range binomial {
		for _, b := range binomial {
			gaussian = append(gaussian, a*b/256)
		}
	}
	sobel := []float32{
		-1, 0, 1, -2, 0, 2, -1, 0, 1, // d/dx
		-1, -2, -1, 0, 0, 0, 1, 2, 1, // d/dy
	}
	g := &onnxpb.GraphProto{
		Name:      proto.String("edges"),
		DocString: proto.String("Edge detection: grayscale, Gaussian blur, Sobel gradient magnitude."),
		Input:     []*onnxpb.ValueInfoProto{imageValue("image", 3)},
		Output:    []*onnxpb.ValueInfoProto{imageValue("edges", 1)},
		Initializer: []*onnxpb.TensorProto{
			floats("luma_weights", []int64{1, 3, 1, 1}, []float32{0.299, 0.587, 0.114}),
			ints("border", []int64{8}, []int64{0, 0, 3, 3, 0, 0, 3, 3}),
			floats("gaussian_weights", []int64{1, 1, 5, 5}, gaussian),
			floats("sobel_weights", []int64{2, 1, 3, 3}, sobel),
			ints("channel_axis", []int64{1}, []int64{1}),
			floats("zero", nil, []float32{0}),
			floats("one", nil, []float32{1}),
		},
		Node: []*onnxpb.NodeProto{
			node("grayscale", "Conv", []string{"image", "luma_weights"}, "gray"),
			node("pad_border", "Pad", []string{"gray", "border"}, "padded", stringAttr("mode", "edge")),
			node("blur", "Conv", []string{"padded", "gaussian_weights"}, "blurred", intsAttr("kernel_shape", 5, 5)),
			node("sobel", "Conv", []string{"blurred", "sobel_weights"}, "gradients", intsAttr("kernel_shape", 3, 3)),
			node("square", "Mul", []string{"gradients", "gradients"}, "squares"),
			node("sum_xy", "ReduceSum", []string{"squares", "channel_axis"}, "sum_squares"),
			node("magnitude", "Sqrt", []string{"sum_squares"}, "magnitude"),
			node("clip", "Clip", []string{"magnitude", "zero", "one"}, "edges"),
		},
	}
	return &onnxpb.ModelProto{
		IrVersion:       proto.Int64(7),
		ProducerName:    proto.String("onnxvk internal/example/gen"),
		ProducerVersion: proto.String("1"),
		DocString:       proto.String("The onnxvk built-in example: an edge-detection filter for [1,3,H,W] images in 0..1."),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(14)}},
		Graph:           g,
	}
}

// imageValue describes a float32 [1, channels, H, W] tensor.
func imageValue(name string, channels int64) *onnxpb.ValueInfoProto {
	dims := []*onnxpb.TensorShapeProto_Dimension{
		{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}},
		{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: channels}},
		{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "H"}},
		{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "W"}},
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(graph.Float)),
			Shape:    &onnxpb.TensorShapeProto{Dim: dims},
		}}},
	}
}

func floats(name string, dims []int64, v []float32) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(graph.Float)), Dims: dims, FloatData: v}
}

func ints(name string, dims []int64, v []int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(graph.Int64)), Dims: dims, Int64Data: v}
}

func node(name, op string, inputs []string, output string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{
		Name:      proto.String(name),
		OpType:    proto.String(op),
		Input:     inputs,
		Output:    []string{output},
		Attribute: attrs,
	}
}

func stringAttr(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func intsAttr(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}
