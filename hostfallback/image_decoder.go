package hostfallback

import (
	"bytes"
	"errors"
	"image"
	"image/color"

	// The formats ImageDecoder reads.
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("ImageDecoder", imageDecoderKernel)
}

// imageDecoderKernel is ImageDecoder for the formats Go's standard library
// decodes (JPEG, PNG and the first frame of a GIF): a uint8 [H, W, 3]
// image in RGB or BGR order, or [H, W, 1] for Grayscale. Other formats
// (BMP, TIFF, WebP, JPEG 2000...) are unsupported. Alpha is dropped
// without blending; colour conversions are Go's, which may differ from
// other decoders' by a unit in the last place.
func imageDecoderKernel(c *Call) error {
	t, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if t.DType != graph.Uint8 || t.Rank() != 1 {
		return c.Errorf("encoded stream %s%v, want 1-D uint8", t.DType, t.Shape)
	}
	img, _, err := image.Decode(bytes.NewReader(t.Data[:t.NumElements()]))
	if errors.Is(err, image.ErrFormat) {
		return c.Unsupported("image format")
	}
	if err != nil {
		return c.Errorf("decoding: %w", err)
	}
	format := ops.Params[ops.ImageDecoderParams](c.Node, c.Opset).PixelFormat
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	switch format {
	case "RGB", "BGR":
		y := c.Output(0, graph.Uint8, []int64{int64(h), int64(w), 3}).Data
		r, bl := 0, 2
		if format == "BGR" {
			r, bl = 2, 0
		}
		for i := range h {
			for j := range w {
				p := color.NRGBAModel.Convert(img.At(b.Min.X+j, b.Min.Y+i)).(color.NRGBA)
				o := (i*w + j) * 3
				y[o+r], y[o+1], y[o+bl] = p.R, p.G, p.B
			}
		}
	case "Grayscale":
		y := c.Output(0, graph.Uint8, []int64{int64(h), int64(w), 1}).Data
		for i := range h {
			for j := range w {
				p := color.NRGBAModel.Convert(img.At(b.Min.X+j, b.Min.Y+i)).(color.NRGBA)
				y[i*w+j] = grayOf(p)
			}
		}
	default:
		return c.Errorf("pixel_format %q", format)
	}
	return nil
}

// grayOf is the ITU-R 601-2 luma of an opaque colour, rounded, as PIL's
// "L" conversion computes it.
func grayOf(p color.NRGBA) uint8 {
	return uint8((19595*uint32(p.R) + 38470*uint32(p.G) + 7471*uint32(p.B) + 1<<15) >> 16)
}
