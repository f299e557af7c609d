package recolor_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/refdata/refdata/recolor"
)

func TestParseColor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want color.NRGBA
		ok   bool
	}{
		{"(R=1,G=0.5,B=0,A=1)", color.NRGBA{255, 128, 0, 255}, true}, // 127.5 rounds away from zero
		{"(R=0.000000,G=1.000000,B=0.250000,A=0.5)", color.NRGBA{0, 255, 64, 128}, true},
		{"(R=.2,G=0.,B=00.1,A=1)", color.NRGBA{51, 0, 26, 255}, true},
		{"(R=0.001,G=0.002,B=0.998,A=0.999)", color.NRGBA{0, 1, 254, 255}, true},
		{"", color.NRGBA{}, false},
		{"(", color.NRGBA{}, false},
		{")", color.NRGBA{}, false},
		{"()", color.NRGBA{}, false},
		{"(R=1,G=1,B=1)", color.NRGBA{}, false},
		{"(R=1,G=1,B=1,A=1,X=1)", color.NRGBA{}, false},
		{"R=1,G=1,B=1,A=1", color.NRGBA{}, false},
		{"(r=1,g=1,b=1,a=1)", color.NRGBA{}, false},
		{"(G=1,R=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=1, G=1, B=1, A=1)", color.NRGBA{}, false},
		{"(R=1.1,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=-0,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=1e0,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=NaN,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=0x1,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=.,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=0..1,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"(R=,G=1,B=1,A=1)", color.NRGBA{}, false},
		{"#ff0000", color.NRGBA{}, false},
	} {
		got, err := recolor.ParseColor(tc.in)
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("ParseColor(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case !tc.ok && err == nil:
			t.Errorf("ParseColor(%q) = %v, want an error", tc.in, got)
		case !tc.ok && !strings.Contains(err.Error(), "(R=..,G=..,B=..,A=..)"):
			t.Errorf("ParseColor(%q): %v does not show the form", tc.in, err)
		}
	}
}

func FuzzParseColor(f *testing.F) {
	for _, s := range []string{"(R=1,G=0.5,B=0,A=1)", "(R=.5,G=0.,B=1,A=0)", "(R=1e9,G=1,B=1,A=1)", "((", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := recolor.ParseColor(s)
		if err != nil {
			return
		}
		// What parses is the form: printing the 8-bit channels back parses to them.
		back := "(R=" + frac(c.R) + ",G=" + frac(c.G) + ",B=" + frac(c.B) + ",A=" + frac(c.A) + ")"
		if again, err := recolor.ParseColor(back); err != nil || again != c {
			t.Errorf("%q → %v, printed %q → %v, %v", s, c, back, again, err)
		}
	})
}

func frac(v uint8) string { return strconv.FormatFloat(float64(v)/255, 'f', -1, 64) }

// logo draws a synthetic logo with soft marker edges of both kinds the rule
// meets: a red disc fading into transparency, a green ring fading into black on
// an opaque black square, a blue bar whose edges blend into the red disc, and
// near-pure markers within the tolerance band.
func logo(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	c := float64(size) / 2
	for y := range size {
		for x := range size {
			dx, dy := float64(x)+0.5-c, float64(y)+0.5-c
			d := math.Hypot(dx, dy)
			var p color.NRGBA
			if disc := clamp(c*0.45 - d + 0.5); disc > 0 { // red over transparency: alpha falls off
				p = color.NRGBA{255, 0, 0, uint8(math.Round(255 * disc))}
			}
			if x >= size*3/4 && y >= size*3/4 { // black square with a green ring fading into black
				ring := clamp(1.5 - math.Abs(math.Hypot(float64(x-size*7/8), float64(y-size*7/8))-float64(size)/16))
				p = color.NRGBA{0, uint8(math.Round(255 * ring)), 0, 255}
			}
			if bar := clamp(3 - math.Abs(dy)); bar > 0 && math.Abs(dx) < c*0.6 { // blue over red or transparency
				g := p
				p = color.NRGBA{uint8(math.Round(float64(g.R) * (1 - bar))), 0, uint8(math.Round(255 * bar)), max(g.A, uint8(math.Round(255*bar)))}
			}
			if y == 0 { // near-pure markers and a slot's neighbour colors
				p = []color.NRGBA{{250, 6, 3, 255}, {10, 245, 16, 255}, {0, 12, 241, 200}, {8, 8, 8, 255}, {255, 255, 0, 255}, {255, 255, 255, 255}, {128, 0, 127, 255}}[x%7]
			}
			img.SetNRGBA(x, y, p)
		}
	}
	return img
}

func clamp(v float64) float64 { return min(1, max(0, v)) }

// expected is the rule as openapi.yaml states it, written out for one pixel.
func expected(p color.NRGBA, slots [3]color.NRGBA) color.NRGBA {
	w := func(v uint8) float64 {
		if v <= 16 {
			return 0
		}
		if v >= 239 {
			return 1
		}
		return (float64(v) - 16) / 223
	}
	wr, wg, wb := w(p.R), w(p.G), w(p.B)
	if s := wr + wg + wb; s > 1 {
		wr, wg, wb = wr/s, wg/s, wb/s
	}
	k := 1 - wr - wg - wb
	aP, aS, aO := float64(slots[0].A)/255, float64(slots[1].A)/255, float64(slots[2].A)/255
	m := k + wr*aP + wg*aS + wb*aO
	ch := func(p, s, o uint8) uint8 {
		if m == 0 {
			return 0
		}
		return uint8(math.Round((wr*aP*float64(p) + wg*aS*float64(s) + wb*aO*float64(o)) / m))
	}
	return color.NRGBA{
		ch(slots[0].R, slots[1].R, slots[2].R),
		ch(slots[0].G, slots[1].G, slots[2].G),
		ch(slots[0].B, slots[1].B, slots[2].B),
		uint8(math.Round(float64(p.A) * m)),
	}
}

func TestPNGFollowsTheRule(t *testing.T) {
	t.Parallel()
	base := logo(64)
	var in bytes.Buffer
	if err := png.Encode(&in, base); err != nil {
		t.Fatal(err)
	}
	opaque := image.NewNRGBA(base.Rect) // decoded as RGBA: the other path in
	for i := range opaque.Pix {
		opaque.Pix[i] = base.Pix[i]
		if i%4 == 3 {
			opaque.Pix[i] = 255
		}
	}
	var inOpaque bytes.Buffer
	if err := png.Encode(&inOpaque, opaque); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		base  *image.NRGBA
		png   []byte
		slots recolor.Colors
	}{
		{"markers kept", base, in.Bytes(), recolor.Markers},
		{"all slots", base, in.Bytes(), recolor.Colors{{20, 60, 200, 255}, {250, 200, 10, 255}, {255, 255, 255, 255}}},
		{"translucent slots", base, in.Bytes(), recolor.Colors{{20, 60, 200, 128}, {250, 200, 10, 0}, {40, 40, 40, 255}}},
		{"opaque base", opaque, inOpaque.Bytes(), recolor.Colors{{0, 128, 255, 255}, {255, 0, 255, 64}, {9, 9, 9, 255}}},
	} {
		out, err := recolor.PNG(context.Background(), tc.png, tc.slots, 64*64)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: the answer is no PNG: %v", tc.name, err)
		}
		bad := 0
		for y := range 64 {
			for x := range 64 {
				want := expected(tc.base.NRGBAAt(x, y), tc.slots)
				got := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				if want.A == 0 {
					got.R, got.G, got.B, want.R, want.G, want.B = 0, 0, 0, 0, 0, 0 // no color without coverage
				}
				if !near(got, want) {
					if bad++; bad <= 5 {
						t.Errorf("%s: pixel (%d,%d) %v → %v, want %v ±1", tc.name, x, y, tc.base.NRGBAAt(x, y), got, want)
					}
				}
			}
		}
	}
}

func near(a, b color.NRGBA) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= 1 && int(y)-int(x) <= 1 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// TestApplyByHand: a few pixels whose answers are worked out by hand.
func TestApplyByHand(t *testing.T) {
	t.Parallel()
	slots := recolor.Colors{{0, 128, 255, 255}, {255, 255, 0, 255}, {255, 255, 255, 128}}
	for _, tc := range []struct{ in, want color.NRGBA }{
		{color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 128, 255, 255}},   // red → primary
		{color.NRGBA{247, 10, 5, 77}, color.NRGBA{0, 128, 255, 77}},    // within the band, alpha kept
		{color.NRGBA{0, 255, 0, 255}, color.NRGBA{255, 255, 0, 255}},   // green → secondary
		{color.NRGBA{0, 0, 0, 255}, color.NRGBA{0, 0, 0, 255}},         // black stays
		{color.NRGBA{0, 0, 255, 200}, color.NRGBA{255, 255, 255, 100}}, // outline at half alpha: 200 × 128/255
		{color.NRGBA{0, 128, 0, 255}, color.NRGBA{128, 128, 0, 255}},   // green half over black: (128−16)/223 of yellow, 255 × 112/223 = 128.07
	} {
		img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
		img.SetNRGBA(0, 0, tc.in)
		got := recolor.Apply(img, slots).NRGBAAt(0, 0)
		if !near(got, tc.want) {
			t.Errorf("%v → %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestPNGRefuses(t *testing.T) {
	t.Parallel()
	var big bytes.Buffer
	if err := png.Encode(&big, image.NewNRGBA(image.Rect(0, 0, 65, 64))); err != nil {
		t.Fatal(err)
	}
	if _, err := recolor.PNG(context.Background(), big.Bytes(), recolor.Markers, 64*64); !errors.Is(err, recolor.ErrTooLarge) {
		t.Errorf("65×64 pixels with a bound of 64×64: %v, want ErrTooLarge", err)
	}
	for _, b := range [][]byte{nil, []byte("GIF89a"), big.Bytes()[:40]} {
		if _, err := recolor.PNG(context.Background(), b, recolor.Markers, 64*64); err == nil {
			t.Errorf("%q: no error", b)
		}
	}
}

// countdown is a context that ends at its n+1-th look: it stands for a client
// that leaves at any point of the work, without a clock.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestPNGStops: a recoloring whose context ends stops with the context's
// error wherever it is: reading the base, recoloring or writing the answer;
// with a context that ends late enough it completes.
func TestPNGStops(t *testing.T) {
	t.Parallel()
	var in bytes.Buffer
	if err := png.Encode(&in, logo(512)); err != nil {
		t.Fatal(err)
	}
	stopped := map[string]int{} // by the phase the error names
	for n := 0; ; n++ {
		out, err := recolor.PNG(&countdown{context.Background(), n}, in.Bytes(), recolor.Markers, 512*512)
		if err == nil {
			if _, err := png.Decode(bytes.NewReader(out)); err != nil {
				t.Fatalf("completed after %d looks: %v", n, err)
			}
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ended at look %d: %v, want context.Canceled", n, err)
		}
		phase, _, _ := strings.Cut(err.Error(), ":")
		stopped[phase]++
		if n > 10000 {
			t.Fatal("never completes")
		}
	}
	for _, phase := range []string{"decode png", "recolor", "encode png"} {
		if stopped[phase] == 0 {
			t.Errorf("never stopped while %s (stopped: %v)", phase, stopped)
		}
	}
	if stopped["recolor"] < 4 {
		t.Errorf("recoloring 512×512 pixels looked at its context %d times, want one per band", stopped["recolor"])
	}
}

// BenchmarkPNG: one 256×256 logo recolored, from PNG bytes to PNG bytes.
func BenchmarkPNG(b *testing.B) {
	var in bytes.Buffer
	if err := png.Encode(&in, logo(256)); err != nil {
		b.Fatal(err)
	}
	slots := recolor.Colors{{20, 60, 200, 255}, {250, 200, 10, 255}, {255, 255, 255, 128}}
	for b.Loop() {
		if _, err := recolor.PNG(context.Background(), in.Bytes(), slots, 256*256); err != nil {
			b.Fatal(err)
		}
	}
}
