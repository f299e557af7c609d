package handler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/refdata/refdata/bounded"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/recolor"
	"github.com/refdata/refdata/representation"
)

// The bounds of the recolored logos: the base image's size and pixels (4 MB
// decoded), and the answers kept; at most one recoloring per core at once.
const (
	maxLogoBytes   = 4 << 20
	maxLogoPixels  = 1024 * 1024
	logoCacheBytes = 32 << 20
)

// DefaultMaxRecolorsPerClient is Server.MaxRecolorsPerClient when unset: twice
// the cores of a small server, so one client cannot queue work for all.
const DefaultMaxRecolorsPerClient = 4

// GetPremierLogoImage serves a logo's mirrored base PNG recolored (package
// recolor) with the colors the query names. Its ETag is the base image's hash
// and the colors, so a 304 costs no recoloring; answers are kept by it. Not
// described for the edge: the mirror can change under an edition.
func (s *Server) GetPremierLogoImage(w http.ResponseWriter, r *http.Request, id string, params gen.GetPremierLogoImageParams) {
	s.write(w, r, s.logoImage(r, id, params))
}

func (s *Server) logoImage(r *http.Request, id string, params gen.GetPremierLogoImageParams) Answer {
	u, ok := catalog.ParseUUID(id)
	if !ok {
		return failed(catalog.Errorf(catalog.EINVALID, "%q is not a UUID; a premier team logo UUID is 8-4-4-4-12 hexadecimal digits, as /v1/premier/logos lists them", id))
	}
	colors := recolor.Markers
	for slot, v := range []*string{params.Primary, params.Secondary, params.Outline} {
		if v == nil {
			continue
		}
		c, err := recolor.ParseColor(*v)
		if err != nil {
			return failed(catalog.Errorf(catalog.EINVALID, "%s: %s", [...]string{"primary", "secondary", "outline"}[slot], err))
		}
		colors[slot] = c
	}
	ed := s.Repo.Active()
	icon, known := ed.LogoImage(u)
	if !known {
		return notFound(ed, "no premier team logo with uuid %s in version %s; list them at /v1/premier/logos", u, ed.ManifestID)
	}
	var file media.File
	mirrored := false
	if s.Media != nil && icon != "" {
		file, mirrored = s.Media.Lookup(icon)
		if !mirrored {
			file, mirrored = s.mirroredAt(r.Context(), icon)
		}
	}
	if !mirrored {
		return failed(catalog.Errorf(catalog.ENOTFOUND, "the image of premier team logo %s is not mirrored by this server; its displayIcon at /v1/premier/logos/%s names the original", u, u))
	}
	logos := s.logoCache()
	etag := `"logo-` + file.SHA256 + "-" + colors.Key() + `"`
	if representation.ETagMatch(r.Header.Values("If-None-Match"), etag) {
		return body(ed, logoBody(nil, etag), logos.route)
	}
	b := logos.get(etag)
	if b == nil {
		client, limit := clientKey(r.RemoteAddr), cmp.Or(s.MaxRecolorsPerClient, DefaultMaxRecolorsPerClient)
		if !logos.clients.acquire(client, limit) {
			a := failed(catalog.Errorf(catalog.ELIMIT, "this client has %d logos being recolored, the most one client may at once; retry after %s seconds, or once one has been answered", limit, retryAfter))
			a.Fields = retryLater
			return a
		}
		png, err := s.recolorLogo(r, logos.sem, file, colors)
		logos.clients.release(client)
		if err != nil {
			return failed(err)
		}
		b = logoBody(png, etag)
		logos.put(etag, b)
	}
	return body(ed, b, logos.route)
}

// logoBody is a recolored logo (nil for a 304) under its own ETag, which
// names the base image and the colors rather than hashing the bytes, so a
// 304 needs no recoloring. (Assemble would quote the hash of an ETag of its
// own making, and these are not.)
func logoBody(b []byte, etag string) *representation.Body {
	body := representation.NewBody(b, "")
	body.ETagField = representation.NewField("ETag", etag)
	return body
}

// mirroredAt finds the file a media URL of this server's form names by its
// content: an import with --public-media-url points the bodies at
// <public URL>/media/<sha256>, which the mirror's index of upstream URLs does
// not hold. The host is not this server's to check, nor does it matter: the
// name is the content, and only a file this mirror holds is used.
func (s *Server) mirroredAt(ctx context.Context, u string) (media.File, bool) {
	p, err := url.Parse(u)
	if err != nil {
		return media.File{}, false
	}
	dir, sum := path.Split(p.Path)
	if !strings.HasSuffix(dir, "/media/") || !media.ValidHash(sum) {
		return media.File{}, false
	}
	f, err := s.Media.Open(ctx, sum)
	if err != nil {
		return media.File{}, false
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return media.File{}, false
	}
	return media.File{SHA256: sum, ContentType: s.mediaType(sum), Size: size}, true
}

// recolorLogo reads a base image from the mirror and recolors it, one per core
// at a time; it stops when the request's context ends (its client left).
func (s *Server) recolorLogo(r *http.Request, sem chan struct{}, file media.File, colors recolor.Colors) ([]byte, error) {
	if file.Size > maxLogoBytes {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "the image of this logo is %d bytes, more than the %d this server recolors; fetch the original and recolor it yourself", file.Size, maxLogoBytes)
	}
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-r.Context().Done():
		return nil, catalog.Errorf(catalog.EUNAVAILABLE, "the request ended while waiting to recolor; retry later")
	}
	f, err := s.Media.Open(r.Context(), file.SHA256)
	if err != nil {
		return nil, catalog.Internal("the mirrored image cannot be opened", fmt.Errorf("open %s: %w", file.SHA256, err))
	}
	defer f.Close()
	base, err := io.ReadAll(io.LimitReader(f, maxLogoBytes+1))
	if err != nil {
		return nil, catalog.Internal("the mirrored image cannot be read", fmt.Errorf("read %s: %w", file.SHA256, err))
	}
	b, err := recolor.PNG(r.Context(), base, colors, maxLogoPixels)
	if r.Context().Err() != nil {
		return nil, catalog.Errorf(catalog.EUNAVAILABLE, "the request ended while recoloring; retry later")
	}
	if errors.Is(err, recolor.ErrTooLarge) || len(base) > maxLogoBytes {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "the image of this logo is larger than this server recolors (%d pixels); fetch the original and recolor it yourself", maxLogoPixels)
	}
	if err != nil {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "the mirrored image of this logo is not a PNG this server can recolor")
	}
	return b, nil
}

// logoCache keeps the recolored logos last served, by ETag, up to
// logoCacheBytes (least recently served leave first; one over an eighth of
// that is not kept); sem bounds recolorings, clients those of one client.
type logoCache struct {
	once    sync.Once
	route   *representation.Route
	sem     chan struct{}
	clients perClient
	kept    *bounded.Cache[string, *representation.Body]
}

// logoCache is s's, made at its first use from s.Fresh.
func (s *Server) logoCache() *logoCache {
	s.logos.once.Do(func() { s.logos.init(s.Fresh) })
	return &s.logos
}

func (c *logoCache) init(fresh time.Duration) {
	c.route = representation.NewRoute("/v1/premier/logos/{uuid}/image", "image/png", CatalogCache(cmp.Or(fresh, DefaultFresh)), noSniff)
	c.sem = make(chan struct{}, runtime.GOMAXPROCS(0))
	size := func(etag string, b *representation.Body) int64 { return int64(b.Len() + len(etag)) }
	c.kept = bounded.New(bounded.Limits{Bytes: logoCacheBytes, Largest: logoCacheBytes / 8}, size)
}

// get is the answer kept under etag; nil when none is.
func (c *logoCache) get(etag string) *representation.Body {
	b, _ := c.kept.Get(etag)
	return b
}

func (c *logoCache) put(etag string, b *representation.Body) { c.kept.Add(etag, b) }
