package upstream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/refdata/refdata/envelope"
)

// Version is an answer of /v1/version.
type Version struct {
	// Body is the response body as sent ({"status":200,"data":{…}}).
	Body []byte
	// ManifestID is data.manifestId.
	ManifestID string
	// ETag is the answer's ETag, for the next If-None-Match ("" when none).
	ETag string
	// NotModified: the upstream answered 304 to If-None-Match; Body is nil.
	NotModified bool
	// Refdata: the answer carries X-Data-Version, which only another refdata sends.
	Refdata bool
}

// Version asks /v1/version, with If-None-Match when etag is not "".
func (c *Client) Version(ctx context.Context, etag string) (*Version, error) {
	var h http.Header
	if etag != "" {
		h = http.Header{"If-None-Match": {etag}}
	}
	var id string
	res, err := c.Get(ctx, "/v1/version", nil, h, func(b []byte) error {
		data, err := envelope.Raw(b, envelope.Object)
		if err != nil {
			return notJSON(b, err)
		}
		var v struct {
			ManifestID string `json:"manifestId"`
		}
		if err := json.Unmarshal(data, &v); err != nil || v.ManifestID == "" {
			return errors.New("the version record has no manifestId")
		}
		id = v.ManifestID
		return nil
	})
	if err != nil {
		return nil, err
	}
	v := &Version{ETag: res.Header.Get("ETag"), Refdata: res.Header.Get("X-Data-Version") != ""}
	switch res.Status {
	case http.StatusOK:
		v.Body, v.ManifestID = res.Body, id
	case http.StatusNotModified:
		v.NotModified = true
		v.ETag = cmp.Or(v.ETag, etag)
	default:
		return nil, &StatusError{URL: c.base.String() + "/v1/version", Status: res.Status}
	}
	return v, nil
}

// ErrHTML is wrapped by the error of an answer that is an HTML page where
// JSON was asked for: a proxy's or CDN's error page, a login portal, a
// website at the upstream's address.
var ErrHTML = errors.New("answered text/html, not JSON")

// notJSON names an HTML page as one, rather than by the first JSON syntax
// error in it. The body is sniffed (http.DetectContentType): the check of an
// answer sees its body only.
func notJSON(body []byte, err error) error {
	if err != nil && strings.HasPrefix(http.DetectContentType(body), "text/html") {
		return fmt.Errorf("%w (%s)", ErrHTML, bytes.TrimSpace(body[:min(len(body), 60)]))
	}
	return err
}

// ErrNoCatalog is returned by Catalog when the upstream answers 404: it does not
// serve that catalog (or that language).
var ErrNoCatalog = errors.New("the upstream does not serve it (404)")

// Catalog fetches /v1/<name>?language=<language> and returns the body as sent,
// once it is a {"status":200,"data":[…]} envelope of valid UTF-8 JSON. language
// is passed as given: the public API's codes are case-sensitive.
func (c *Client) Catalog(ctx context.Context, name, language string) ([]byte, error) {
	q := url.Values{}
	if language != "" {
		q.Set("language", language)
	}
	body, _, err := c.getData(ctx, "/v1/"+name, q, envelope.Array, fmt.Sprintf("/v1/%s?language=%s", name, language))
	return body, err
}

// Table fetches /v1/locres/<locale> (a refdata upstream's string tables) and
// returns data, the table itself; ErrNoCatalog when the upstream has none.
func (c *Client) Table(ctx context.Context, locale string) ([]byte, error) {
	_, data, err := c.getData(ctx, "/v1/locres/"+url.PathEscape(locale), nil, envelope.Object, "/v1/locres/"+locale)
	if err != nil {
		return nil, err
	}
	return append(bytes.TrimRight(data, " \t\r\n"), '\n'), nil
}

// getData fetches path, once a 200 body is an envelope whose data is of kind k,
// and returns the body and its data; a 404 is ErrNoCatalog (for what), any
// other answer a StatusError.
func (c *Client) getData(ctx context.Context, path string, q url.Values, k envelope.Kind, what string) (body, data []byte, err error) {
	res, err := c.Get(ctx, path, q, nil, func(b []byte) (err error) {
		data, err = envelope.Raw(b, k)
		return notJSON(b, err)
	})
	switch {
	case err != nil:
		return nil, nil, err
	case res.Status == http.StatusOK:
		return res.Body, data, nil
	case res.Status == http.StatusNotFound:
		return nil, nil, fmt.Errorf("%s: %w", what, ErrNoCatalog)
	}
	return nil, nil, &StatusError{URL: c.base.String() + path, Status: res.Status}
}

// AdvertisesAllLanguages reports whether the upstream's /openapi.json lists
// "all" among the values of a parameter named language: only then is
// ?language=all asked for. An upstream without a spec is asked per locale.
func (c *Client) AdvertisesAllLanguages(ctx context.Context) bool {
	res, err := c.Get(ctx, "/openapi.json", nil, nil, nil)
	if err != nil || res.Status != http.StatusOK {
		return false
	}
	var doc any
	if json.Unmarshal(res.Body, &doc) != nil {
		return false
	}
	return hasAllLanguage(doc, 0)
}

func hasAllLanguage(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if x["name"] == "language" && x["in"] == "query" {
			sc, _ := x["schema"].(map[string]any)
			if enum, _ := sc["enum"].([]any); slices.Contains(enum, any("all")) {
				return true
			}
		}
		for _, vv := range x {
			if hasAllLanguage(vv, depth+1) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, func(v any) bool { return hasAllLanguage(v, depth+1) })
	}
	return false
}

// PickLocale turns a language=all value into one locale's: every object whose
// keys are all locale codes and include en-US (a localized text) becomes its
// value for locale, falling back to en-US.
func PickLocale(v any, locale string, locales []string) any {
	isLoc := make(map[string]bool, len(locales))
	for _, l := range locales {
		isLoc[l] = true
	}
	return pick(v, locale, isLoc)
}

func pick(v any, locale string, isLoc map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["en-US"]; ok {
			all := true
			for k := range x {
				if !isLoc[k] {
					all = false
					break
				}
			}
			if all {
				if t, ok := x[locale]; ok {
					return t
				}
				return x["en-US"]
			}
		}
		out := make(map[string]any, len(x))
		for k, vv := range x {
			out[k] = pick(vv, locale, isLoc)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, vv := range x {
			out[i] = pick(vv, locale, isLoc)
		}
		return out
	}
	return v
}
