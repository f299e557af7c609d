package router_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// fakeMedia is a mirror holding files by upstream URL; with every set it holds
// one for any URL ending in .png (what the generic tests' server has).
type fakeMedia struct {
	files map[string][]byte // upstream URL → bytes
	every []byte
}

func (m *fakeMedia) Lookup(u string) (media.File, bool) {
	b, ok := m.files[u]
	if !ok && m.every != nil && strings.HasSuffix(u, ".png") {
		b, ok = m.every, true
	}
	if !ok {
		return media.File{}, false
	}
	sum := sha256.Sum256(b)
	return media.File{SHA256: hex.EncodeToString(sum[:]), ContentType: "image/png", Size: int64(len(b))}, true
}

func (m *fakeMedia) Len() int { return len(m.files) }

// ContentType: every file of the fake is a PNG.
func (m *fakeMedia) ContentType(string) (string, bool) { return "image/png", true }

func (m *fakeMedia) Open(_ context.Context, sha string) (io.ReadSeekCloser, error) {
	for _, b := range append([][]byte{m.every}, values(m.files)...) {
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) == sha {
			return nopCloser{bytes.NewReader(b)}, nil
		}
	}
	return nil, fmt.Errorf("no file %s: %w", sha, fs.ErrNotExist)
}

func values(m map[string][]byte) (out [][]byte) {
	for _, b := range m {
		out = append(out, b)
	}
	return out
}

// unreadable is a mirror that knows its files but cannot open them.
type unreadable struct{ *fakeMedia }

func (unreadable) Open(context.Context, string) (io.ReadSeekCloser, error) {
	return nil, fmt.Errorf("disk on fire")
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// markerPNG is a 4×4 image: a red, a green, a blue and a black row, the last
// half transparent.
func markerPNG(t testing.TB) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for x := range 4 {
		img.SetNRGBA(x, 0, color.NRGBA{255, 0, 0, 255})
		img.SetNRGBA(x, 1, color.NRGBA{0, 255, 0, 255})
		img.SetNRGBA(x, 2, color.NRGBA{0, 0, 255, 255})
		img.SetNRGBA(x, 3, color.NRGBA{0, 0, 0, 128})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// logoIcons are the sample's premier logos by whether they name an image.
func logoIcons(t *testing.T, ed *edition.Edition) (icon map[catalog.UUID]string, none []catalog.UUID) {
	icon = map[catalog.UUID]string{}
	for _, u := range ed.UUIDs(catalog.PremierLogos) {
		b, _, _ := ed.ItemJSON(catalog.PremierLogos, u, catalog.DefaultLocale)
		var v struct {
			Data struct{ DisplayIcon *string } `json:"data"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if v.Data.DisplayIcon == nil {
			none = append(none, u)
		} else {
			icon[u] = *v.Data.DisplayIcon
		}
	}
	if len(icon) < 3 {
		t.Fatalf("the sample has %d logos with an image; the test needs 3", len(icon))
	}
	return icon, none
}

func TestLogoImage(t *testing.T) {
	t.Parallel()
	repo := served(t)
	icons, noIcon := logoIcons(t, repo.Active())
	ids := slices.Collect(maps.Keys(icons))
	mirrored, notPNG, notMirrored := ids[0], ids[1], ids[2]
	lib := &fakeMedia{files: map[string][]byte{icons[mirrored]: markerPNG(t), icons[notPNG]: []byte("GIF89a not a png")}}
	newHandler := func(lib media.Library) http.Handler {
		h, err := router.New(&handler.Server{Repo: repo, Media: lib}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h, noMirror := newHandler(lib), newHandler(nil)
	check := apitest.New(t)
	path := func(u catalog.UUID, query string) string {
		return "/v1/premier/logos/" + u.String() + "/image" + query
	}
	q := func(slot, c string) string { return slot + "=" + url.QueryEscape(c) }
	noIconTarget := "" // the full sample has one; the race detector's trimmed one none
	if len(noIcon) > 0 {
		noIconTarget = path(noIcon[0], "")
	}
	all := "?" + q("primary", "(R=0,G=0.5,B=1,A=1)") + "&" + q("secondary", "(R=1,G=1,B=0,A=1)") + "&" + q("outline", "(R=1,G=1,B=1,A=0.5)")
	for _, tc := range []struct {
		name   string
		h      http.Handler
		target string
		status int
		rows   [4]color.NRGBA // the answer's rows, for a 200
		says   string         // in the error, for a 4xx
	}{
		{"markers kept", h, path(mirrored, ""), 200, [4]color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {0, 0, 0, 128}}, ""},
		{"every slot", h, path(mirrored, all), 200, [4]color.NRGBA{{0, 128, 255, 255}, {255, 255, 0, 255}, {255, 255, 255, 128}, {0, 0, 0, 128}}, ""},
		{"primary only", h, path(mirrored, "?"+q("primary", "(R=.2,G=.2,B=.2,A=1)")), 200, [4]color.NRGBA{{51, 51, 51, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {0, 0, 0, 128}}, ""},
		{"malformed color", h, path(mirrored, "?"+q("secondary", "#00ff00")), 400, [4]color.NRGBA{}, "(R=..,G=..,B=..,A=..)"},
		{"channel past 1", h, path(mirrored, "?"+q("outline", "(R=2,G=0,B=0,A=1)")), 400, [4]color.NRGBA{}, "outline"},
		{"malformed uuid", h, "/v1/premier/logos/not-a-uuid/image", 400, [4]color.NRGBA{}, "not a UUID"},
		{"unknown logo", h, path(catalog.UUID{}, ""), 404, [4]color.NRGBA{}, "no premier team logo"},
		{"logo without an image", h, noIconTarget, 404, [4]color.NRGBA{}, "not mirrored"},
		{"image not mirrored", h, path(notMirrored, ""), 404, [4]color.NRGBA{}, "not mirrored"},
		{"image not a PNG", h, path(notPNG, ""), 404, [4]color.NRGBA{}, "not a PNG"},
		{"no mirror", noMirror, path(mirrored, ""), 404, [4]color.NRGBA{}, "not mirrored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.target == "" {
				t.Skip("the sample served here has no such logo")
			}
			res := check.Do(t, tc.h, get(tc.target))
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("%d %.200s, want %d", res.StatusCode, body, tc.status)
			}
			if tc.status != http.StatusOK {
				if !strings.Contains(string(body), tc.says) {
					t.Errorf("%s does not say %q", body, tc.says)
				}
				return
			}
			img, err := png.Decode(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			for y, want := range tc.rows {
				for x := range 4 {
					if got := color.NRGBAModel.Convert(img.At(x, y)); got != want {
						t.Errorf("pixel (%d,%d) = %v, want %v", x, y, got, want)
					}
				}
			}
			if cc := res.Header.Get("Cache-Control"); cc != handler.CatalogCache(0) {
				t.Errorf("Cache-Control %q, want the catalog's %q", cc, handler.CatalogCache(0))
			}
			etag := res.Header.Get("ETag")
			if res := check.Do(t, tc.h, get(tc.target, "If-None-Match", etag)); res.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match %s: %d, want 304", etag, res.StatusCode)
			}
		})
	}
	t.Run("304 without recoloring", func(t *testing.T) {
		t.Parallel()
		etag := check.Do(t, h, get(path(mirrored, all))).Header.Get("ETag")
		unreadable := newHandler(unreadable{lib})
		if res := check.Do(t, unreadable, get(path(mirrored, all), "If-None-Match", etag)); res.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s with a mirror that cannot open files: %d, want 304", etag, res.StatusCode)
		}
		if res := check.Do(t, unreadable, get(path(mirrored, all))); res.StatusCode != http.StatusInternalServerError {
			t.Errorf("no If-None-Match, a mirror that cannot open files: %d, want 500", res.StatusCode)
		}
	})
	t.Run("etag", func(t *testing.T) {
		t.Parallel()
		etag := func(target string) string { return check.Do(t, h, get(target)).Header.Get("ETag") }
		same := etag(path(mirrored, "?"+q("primary", "(R=1,G=0.5,B=0,A=1)")))
		if other := etag(path(mirrored, "?"+q("primary", "(R=1.0,G=0.50,B=0.000,A=1)"))); other != same {
			t.Errorf("the same colors written differently: ETags %s and %s", same, other)
		}
		if other := etag(path(mirrored, "?"+q("secondary", "(R=1,G=0.5,B=0,A=1)"))); other == same {
			t.Errorf("another slot: the same ETag %s", same)
		}
		if plain := etag(path(mirrored, "")); plain == same {
			t.Errorf("no colors: the same ETag %s", same)
		}
	})
}

// TestLogoImageRewritten: with --public-media-url an import points a logo's
// displayIcon at <public URL>/media/<sha256>, a URL the mirror's index of
// upstream URLs does not hold; the image is found by its content all the same,
// and a URL of that form naming a file the mirror lacks is still "not mirrored".
func TestLogoImageRewritten(t *testing.T) {
	t.Parallel()
	r, err := fixtures.Newest()
	if err != nil {
		t.Fatal(err)
	}
	base := markerPNG(t)
	sum := sha256.Sum256(base)
	logos := r.Tables[catalog.PremierLogos]
	var ids []catalog.UUID
	for _, u := range logos.Order {
		d := logos.Items[u][catalog.DefaultLocale]
		var v struct {
			Data struct{ DisplayIcon *string }
		}
		if err := json.Unmarshal(d.JSON, &v); err != nil {
			t.Fatal(err)
		}
		if v.Data.DisplayIcon == nil {
			continue
		}
		name := hex.EncodeToString(sum[:])
		if len(ids) == 1 {
			name = strings.Repeat("0", 64) // a file no mirror holds
		}
		d.JSON = bytes.Replace(d.JSON, []byte(*v.Data.DisplayIcon), []byte("https://cdn.example/refdata/media/"+name), 1)
		if ids = append(ids, u); len(ids) == 2 {
			break
		}
	}
	if len(ids) < 2 {
		t.Fatal("the sample has fewer than 2 logos with an image")
	}
	// The mirror knows the file under its upstream URL alone.
	lib := &fakeMedia{files: map[string][]byte{"https://media.example/logo.png": base}}
	h, err := router.New(&handler.Server{Repo: edition.Serve(edition.New(r)), Media: lib}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	res := check.Do(t, h, get("/v1/premier/logos/"+ids[0].String()+"/image?primary="+url.QueryEscape("(R=0,G=0,B=0,A=1)")))
	if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" {
		t.Errorf("a logo at its rewritten URL: %d %.200s, want the recolored image", res.StatusCode, body)
	}
	res = check.Do(t, h, get("/v1/premier/logos/"+ids[1].String()+"/image"))
	if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte("not mirrored")) {
		t.Errorf("a rewritten URL naming no file of the mirror: %d %.200s, want 404 not mirrored", res.StatusCode, body)
	}
}

// TestLogoImageTooLarge: a base image past 4 MB, or past 1024×1024 pixels
// (read from its header, before any pixel is decoded), is refused with a 404
// that says so and names the original.
func TestLogoImageTooLarge(t *testing.T) {
	t.Parallel()
	repo := served(t)
	icons, _ := logoIcons(t, repo.Active())
	ids := slices.Collect(maps.Keys(icons))
	var wide bytes.Buffer
	if err := png.Encode(&wide, image.NewNRGBA(image.Rect(0, 0, 1025, 1024))); err != nil {
		t.Fatal(err)
	}
	heavy := append(markerPNG(t), make([]byte, 4<<20)...) // a PNG with 4 MB after its end
	lib := &fakeMedia{files: map[string][]byte{icons[ids[0]]: wide.Bytes(), icons[ids[1]]: heavy}}
	h, err := router.New(&handler.Server{Repo: repo, Media: lib}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	for _, u := range ids[:2] {
		res := check.Do(t, h, get("/v1/premier/logos/"+u.String()+"/image"))
		if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte("than")) || !bytes.Contains(body, []byte("this server recolors")) || !bytes.Contains(body, []byte("original")) {
			t.Errorf("logo %s (%d bytes): %d %.200s, want 404 saying it is too large", u, len(lib.files[icons[u]]), res.StatusCode, body)
		}
	}
}
