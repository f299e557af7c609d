// Package recolor owns the contract's rule for a Premier team logo: the team
// colors in their (R=..,G=..,B=..,A=..) form, and a base image's marker colors
// (red primary, green secondary, blue outline, black kept) replaced by them, with
// a tolerance band for anti-aliased edges. openapi.yaml states the rule.
package recolor

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Colors are the primary, secondary and outline colors, which replace the red,
// green and blue markers; Markers keeps every marker as it is.
type Colors [3]color.NRGBA

// Markers are the marker colors themselves: what an omitted slot keeps.
var Markers = Colors{{R: 255, A: 255}, {G: 255, A: 255}, {B: 255, A: 255}}

// Key is the colors as 24 hexadecimal digits (RGBA of each slot, in order): two
// requests with the same Key get the same image.
func (c Colors) Key() string {
	var b []byte
	for _, s := range c {
		b = append(b, s.R, s.G, s.B, s.A)
	}
	return hex.EncodeToString(b)
}

// ParseColor reads the contract's form: "(R=r,G=g,B=b,A=a)", the channels in
// this order and letter case, no spaces, each a decimal number (digits with at
// most one point) from 0 to 1, converted to 8 bits as round(v × 255), halves
// away from zero. Anything else is an error naming the form.
func ParseColor(s string) (color.NRGBA, error) {
	fail := fmt.Errorf("color %.40q is not in the form (R=..,G=..,B=..,A=..) with each channel a number from 0 to 1, e.g. (R=1,G=0.5,B=0,A=1)", s)
	inner, ok := strings.CutPrefix(s, "(")
	inner, ok2 := strings.CutSuffix(inner, ")")
	parts := strings.Split(inner, ",")
	if !ok || !ok2 || len(parts) != 4 {
		return color.NRGBA{}, fail
	}
	var ch [4]uint8
	for i, name := range []string{"R=", "G=", "B=", "A="} {
		num, ok := strings.CutPrefix(parts[i], name)
		if !ok || len(num) > 20 || !decimal.MatchString(num) {
			return color.NRGBA{}, fail
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v > 1 {
			return color.NRGBA{}, fail
		}
		ch[i] = uint8(math.Round(v * 255))
	}
	return color.NRGBA{R: ch[0], G: ch[1], B: ch[2], A: ch[3]}, nil
}

// decimal: digits with at most one point and at least one digit, nothing else
// (no sign, exponent, hexadecimal, Inf or NaN, which ParseFloat would take).
var decimal = regexp.MustCompile(`^(\d+\.?\d*|\.\d+)$`)

// Tolerance is the band T: a channel within T of 0 counts as 0, within T of
// 255 as 255, and one between in proportion (weight).
const Tolerance = 16

// weight of a marker channel value c: 0 at or below T, 1 at or above 255 − T,
// linear between.
func weight(c uint8) float64 {
	return min(1, max(0, float64(int(c)-Tolerance)/float64(255-2*Tolerance)))
}

// Apply recolors img by the rule openapi.yaml states: per pixel the marker
// weights of its straight (non-premultiplied) red, green and blue, normalized
// when they sum past 1, the rest black's; the slots' colors mixed by them with
// opaque black in premultiplied form; the base alpha scaled by the mix's.
func Apply(img image.Image, c Colors) *image.NRGBA {
	out, _ := apply(context.Background(), img, c)
	return out
}

// band is how many pixels apply recolors between two looks at its context:
// a few milliseconds' work.
const band = 64 << 10

// apply is Apply until ctx ends (then ctx's error).
func apply(ctx context.Context, img image.Image, c Colors) (*image.NRGBA, error) {
	src := nrgba(img)
	var table [256]float64
	for i := range table {
		table[i] = weight(uint8(i))
	}
	out := image.NewNRGBA(src.Rect)
	for i := 0; i+3 < len(src.Pix); i += 4 {
		if i%(4*band) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		w := [3]float64{table[src.Pix[i]], table[src.Pix[i+1]], table[src.Pix[i+2]]}
		if sum := w[0] + w[1] + w[2]; sum > 1 {
			w[0], w[1], w[2] = w[0]/sum, w[1]/sum, w[2]/sum
		}
		m := 1 - w[0] - w[1] - w[2] // black, opaque
		var rgb [3]float64
		for s, slot := range c {
			a := w[s] * float64(slot.A) / 255
			m += a
			rgb[0] += a * float64(slot.R)
			rgb[1] += a * float64(slot.G)
			rgb[2] += a * float64(slot.B)
		}
		for k := range rgb {
			if m > 0 {
				out.Pix[i+k] = uint8(math.Round(min(255, rgb[k]/m)))
			}
		}
		out.Pix[i+3] = uint8(math.Round(float64(src.Pix[i+3]) * min(1, m)))
	}
	return out, nil
}

// nrgba is img with straight alpha: itself when it is one (the PNG decoder's
// form for images with alpha), else converted.
func nrgba(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Stride == 4*n.Rect.Dx() {
		return n
	}
	n := image.NewNRGBA(img.Bounds())
	draw.Draw(n, n.Rect, img, img.Bounds().Min, draw.Src)
	return n
}

// ErrTooLarge is the error of PNG for an image of more than maxPixels.
var ErrTooLarge = errors.New("image too large")

// PNG recolors a PNG image of at most maxPixels pixels (its header is read
// before any pixel is decoded) and encodes the answer as PNG. Once ctx ends
// it stops, with an error wrapping ctx's: decoding and encoding at their next
// read or write, recoloring at its next band of pixels.
func PNG(ctx context.Context, base []byte, c Colors, maxPixels int) ([]byte, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(base))
	if err != nil {
		return nil, fmt.Errorf("read png header: %w", err)
	}
	if cfg.Width*cfg.Height > maxPixels || cfg.Width > maxPixels || cfg.Height > maxPixels {
		return nil, fmt.Errorf("%d×%d pixels, more than %d: %w", cfg.Width, cfg.Height, maxPixels, ErrTooLarge)
	}
	img, err := png.Decode(ctxReader{ctx, bytes.NewReader(base)})
	if err != nil {
		return nil, fmt.Errorf("decode png: %w", err)
	}
	out, err := apply(ctx, img, c)
	if err != nil {
		return nil, fmt.Errorf("recolor: %w", err)
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(ctxWriter{ctx, &buf}, out); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// ctxReader and ctxWriter fail once ctx ends, so png's decoder and encoder,
// which take no context, stop at their next read or write.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(b []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(b)
}

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (w ctxWriter) Write(b []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	return w.w.Write(b)
}
