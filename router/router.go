package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/refdata/refdata"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/representation"
)

// New builds the service's handler. Every error it writes, the router's and
// the parameter binding's included, is the JSON envelope or, on a page path,
// an error page. A server without Pages gets package pages' over its
// repository and mirror.
func New(srv *handler.Server, logger *slog.Logger, m *HTTPMetrics) (http.Handler, error) {
	specJSON, err := specAsJSON()
	if err != nil {
		return nil, err
	}
	if srv.Logger == nil {
		srv.Logger = logger
	}
	if srv.Pages == nil {
		site, err := pages.New(srv.Repo, logger)
		if err != nil {
			return nil, err
		}
		site.Media = srv.Media
		srv.Pages = site
	}
	r := chi.NewRouter()
	// The edge applies the same policy before its memo: see EdgeMayAnswer.
	r.Use(policy(logger, m))
	r.Use(middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		if to, ok := withoutTrailingSlash(r, req); ok {
			w.Header().Set("Location", to)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		msg := fmt.Sprintf("no route %s; the routes are listed in /openapi.yaml", req.URL.Path)
		if IsPagePath(req.URL.Path) {
			msg = fmt.Sprintf("There is no page at %s. The pages are the home page, the API reference (/docs), the catalogs (/browse) and the changes (/changes).", req.URL.Path)
		}
		writeError(w, req, http.StatusNotFound, msg)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		Refuse(representation.HTTPSink{W: w, Req: r}, r.URL.Path, Stop{http.StatusMethodNotAllowed, allow, MethodNotAllowedMessage})
	})
	r.Get("/openapi.yaml", document("application/yaml", refdata.OpenAPIYAML))
	r.Get("/openapi.json", document("application/json", specJSON))
	r.Get(pages.RedocPath, func(w http.ResponseWriter, r *http.Request) {
		representation.Write(w, r, &representation.Response{Route: redocRoute, Body: pages.Redoc()})
	})
	r.Group(func(r chi.Router) {
		r.Use(onRoute)
		r.Use(needsVersion(srv.Repo))
		opts := gen.ChiServerOptions{BaseRouter: r, ErrorHandlerFunc: paramError, Middlewares: []gen.MiddlewareFunc{srv.QueryLimits}}
		gen.HandlerWithOptions(srv, opts)
		// The pinned routes: the catalog routes again under a version.
		opts.BaseRouter = chi.NewRouter()
		catalogs := gen.HandlerWithOptions(srv, opts)
		pinned := srv.Pinned(catalogs)
		for _, rt := range catalogs.(chi.Routes).Routes() {
			if p, ok := handler.PinnedPattern(rt.Pattern); ok {
				r.Get(p, pinned)
			}
		}
	})
	return r, nil
}

// IsPagePath reports whether the errors of a request for path are HTML pages:
// an origin-form path outside /v1 and /media that is not a document or probe.
// The path alone decides, never Accept.
func IsPagePath(path string) bool {
	if !strings.HasPrefix(path, "/") || path == "/v1" || strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/media/") {
		return false
	}
	switch path {
	case "/openapi.yaml", "/openapi.json", "/healthz", "/readyz", "/metrics":
		return false
	}
	return true
}

// writeError answers an error the router decides (SendError).
func writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	SendError(representation.HTTPSink{W: w, Req: r}, r.URL.Path, status, msg)
}

// withoutTrailingSlash is where a request whose path ends in '/' is
// redirected when the path without the slashes is a page or /v1 route: that
// path, escaped as sent, query kept, so each resource has one URL.
func withoutTrailingSlash(router *chi.Mux, r *http.Request) (string, bool) {
	if len(r.URL.Path) < 2 || !strings.HasSuffix(r.URL.Path, "/") {
		return "", false
	}
	path := strings.TrimRight(r.URL.Path, "/")
	escaped := strings.TrimRight(r.URL.EscapedPath(), "/")
	// chi routes on the escaped path when the request has one (RawPath).
	route := path
	if r.URL.RawPath != "" {
		route = escaped
	}
	// A path that starts "//" or "/\" is another host to a browser.
	if path == "" || strings.HasPrefix(escaped, "//") || strings.HasPrefix(escaped, "/\\") ||
		!IsPagePath(path) && !strings.HasPrefix(path, "/v1/") ||
		!router.Match(chi.NewRouteContext(), http.MethodGet, route) {
		return "", false
	}
	if r.URL.RawQuery != "" {
		escaped += "?" + r.URL.RawQuery
	}
	return escaped, true
}

// Messages of the policy's refusals.
const (
	MethodNotAllowedMessage = "this API is read-only: use GET or HEAD (OPTIONS for CORS preflights)"
	BadEscapeMessage        = "the request target has a malformed percent-escape; encode '%' as %25 and use two hexadecimal digits after each '%'"
	// BodyFramingMessage refuses a request whose body is framed by
	// Transfer-Encoding. The API takes no bodies, and with Content-Length as well
	// such a request is how one request is smuggled inside another (RFC 9112
	// § 6.1: answer, then close the connection). net/http drops the
	// Content-Length before a handler sees it, so any Transfer-Encoding is refused.
	BodyFramingMessage = "this API takes no request bodies: a request with Transfer-Encoding is refused and the connection closed; send GET or HEAD without a body"
)

// EscapesOK reports whether every '%' in s starts a %XX escape.
func EscapesOK(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// needsVersion answers 503, with why, wherever a version is needed while repo
// has none; the probes, the metrics and /media answer all the same.
func needsVersion(repo edition.Repository) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !repo.Active().IsNone() || versionless[r.URL.Path] || strings.HasPrefix(r.URL.Path, "/media/") {
				next.ServeHTTP(w, r)
				return
			}
			why := "no version loaded yet"
			if rd, ok := repo.(edition.Readiness); ok {
				if _, ready, reason := rd.Ready(); !ready && reason != "" {
					why = reason
				}
			}
			w.Header().Set("Retry-After", notReadyRetry)
			writeError(w, r, http.StatusServiceUnavailable, why+"; retry later")
		})
	}
}

// notReadyRetry is the Retry-After, in seconds, of a route that needs a
// version while none is loaded: loading one takes a second or a few.
const notReadyRetry = "2"

var versionless = map[string]bool{"/healthz": true, "/readyz": true, "/v1/metrics": true}

// UserAgentOK is the User-Agent rule: any non-blank value.
func UserAgentOK(v string) bool { return strings.TrimSpace(v) != "" }

// redocRoute serves the docs page's script.
var redocRoute = handler.AssetRoute(pages.RedocPath, "text/javascript; charset=utf-8")

// paramError answers a parameter the generated binding rejected with our own
// message naming it, not the binder's text: given twice, missing, or not
// decodable (handler checks the values).
func paramError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		required *gen.RequiredParamError
		many     *gen.TooManyValuesForParamError
		format   *gen.InvalidParamFormatError
	)
	msg := "a request parameter is not in the form /openapi.yaml gives it"
	switch {
	case errors.As(err, &required):
		msg = fmt.Sprintf("parameter %q is required; /openapi.yaml describes it", required.ParamName)
	case errors.As(err, &many):
		msg = fmt.Sprintf("parameter %q is given more than once; give it once", many.ParamName)
	case errors.As(err, &format):
		msg = fmt.Sprintf("parameter %q is not in the form /openapi.yaml gives it; give it once, percent-encoded", format.ParamName)
	}
	writeError(w, r, http.StatusBadRequest, msg)
}

func document(contentType string, body []byte) http.HandlerFunc {
	etag := representation.NewBody(body, "").ETag()
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("ETag", etag)
		h.Set("Cache-Control", handler.CacheDocument)
		_, _ = w.Write(body)
	}
}

func specAsJSON() ([]byte, error) {
	doc, err := catalog.Spec()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render openapi.json: %w", err)
	}
	return b, nil
}
