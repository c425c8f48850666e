// Package example is onnxvk's built-in example: a small edge-detection
// model and a picture to run it on, embedded in the binary so that the CLI
// can show the runtime at work without any files.
//
// Both files are written by the generator in ./gen; run go generate after
// changing it, and commit the results.
package example

//go:generate go run ./gen

import (
	"bytes"
	_ "embed"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// Description says what the example model does and what its output on the
// built-in picture looks like.
const Description = `The built-in example is an edge detector. Its model takes an RGB image
("image", float32 [1,3,H,W], values 0..1, any H and W), converts it to
grayscale, smooths it with a 5x5 Gaussian blur, takes the horizontal and
vertical Sobel gradients and outputs their magnitude, clipped to 0..1
("edges", float32 [1,1,H,W]).

The built-in picture (192x128) shows a house with a red roof, a door, two
windows and a path, a tree, the sun and a cloud in a blue sky over grass.
The output is black wherever the colour is flat and draws the outlines of
all those shapes as bright lines: a line drawing of the picture.`

//go:embed model.onnx
var model []byte

//go:embed picture.png
var picturePNG []byte

// Model returns the serialized ONNX model (a copy the caller may keep).
func Model() []byte { return bytes.Clone(model) }

// Picture returns the built-in picture, decoded afresh on each call.
func Picture() image.Image {
	img, err := png.Decode(bytes.NewReader(picturePNG))
	if err != nil {
		panic(fmt.Sprintf("example: the embedded picture.png is corrupt: %v", err))
	}
	return img
}

// Input returns the built-in picture as the model's input: a float32
// [1,3,H,W] tensor of red, green and blue planes with values in 0..1.
func Input() *graph.Tensor {
	img := Picture()
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	t := graph.NewTensor(graph.Float, []int64{1, 3, int64(h), int64(w)})
	px := graph.View[float32](t)
	plane := w * h
	for y := range h {
		for x := range w {
			c := color.RGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.RGBA)
			i := y*w + x
			px[i] = float32(c.R) / 255
			px[plane+i] = float32(c.G) / 255
			px[2*plane+i] = float32(c.B) / 255
		}
	}
	return t
}

// ImageFromTensor converts a float tensor of shape [1,C,H,W] or [C,H,W] to
// an image: grayscale for C=1, RGB for C=3. Values are clamped to 0..1
// (NaN counts as 0) and scaled to 0..255.
func ImageFromTensor(t *graph.Tensor) (image.Image, error) {
	if t == nil {
		return nil, fmt.Errorf("example: nil tensor")
	}
	switch t.DType {
	case graph.Float, graph.Double, graph.Float16:
	default:
		return nil, fmt.Errorf("example: cannot make an image of a %s tensor", t.DType)
	}
	shape := t.Shape
	if len(shape) == 4 && shape[0] == 1 {
		shape = shape[1:]
	}
	if len(shape) != 3 || (shape[0] != 1 && shape[0] != 3) {
		return nil, fmt.Errorf("example: an image tensor has shape [1,C,H,W] or [C,H,W] with C 1 or 3, not %v", t.Shape)
	}
	c, h, w := shape[0], shape[1], shape[2]
	if h <= 0 || w <= 0 || h > math.MaxInt32 || w > math.MaxInt32 {
		return nil, fmt.Errorf("example: image tensor of shape %v has no pixels or too many", t.Shape)
	}
	n := t.NumElements()
	if int64(len(t.Data)) != t.DType.ByteSize(n) {
		return nil, fmt.Errorf("example: %s tensor of shape %v holds %d bytes", t.DType, t.Shape, len(t.Data))
	}
	level := func(i int64) uint8 {
		v := t.Float64At(i)
		if !(v > 0) {
			return 0
		}
		return uint8(math.Round(min(v, 1) * 255))
	}
	rect := image.Rect(0, 0, int(w), int(h))
	plane := h * w
	if c == 1 {
		img := image.NewGray(rect)
		for i := range plane {
			img.Pix[i] = level(i)
		}
		return img, nil
	}
	img := image.NewRGBA(rect)
	for i := range plane {
		img.Pix[4*i] = level(i)
		img.Pix[4*i+1] = level(plane + i)
		img.Pix[4*i+2] = level(2*plane + i)
		img.Pix[4*i+3] = 255
	}
	return img, nil
}
