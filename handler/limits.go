package handler

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/catalog"
)

// The limits openapi.yaml sets on the parameters the generated binding reads
// as plain strings (maxLength, pattern, format), checked by kin-openapi's own
// string validation so the spec is their one statement. Enums are not checked
// here: the handlers take them in any letter case, as the spec says.

// paramLimit is one bounded parameter.
type paramLimit struct {
	name   string
	schema *openapi3.Schema
}

// specLimits are the bounded parameters by route template, then "query" or
// "header".
var specLimits = sync.OnceValues(func() (map[string]map[string][]paramLimit, error) {
	m := map[string]map[string][]paramLimit{}
	err := eachParam(func(route string, p *openapi3.Parameter) {
		if p.Schema == nil || p.Schema.Value == nil {
			return
		}
		s := p.Schema.Value
		if s.MaxLength == nil && s.Pattern == "" && s.Format == "" || !s.Type.Is(openapi3.TypeString) {
			return
		}
		if m[route] == nil {
			m[route] = map[string][]paramLimit{}
		}
		m[route][p.In] = append(m[route][p.In], paramLimit{p.Name, s})
	})
	return m, err
})

// languageRoutes are the route templates that take a language parameter.
var languageRoutes = sync.OnceValues(func() (map[string]bool, error) {
	m := map[string]bool{}
	err := eachParam(func(route string, p *openapi3.Parameter) {
		if p.In == "query" && p.Name == "language" {
			m[route] = true
		}
	})
	return m, err
})

// eachParam calls f with each GET route template's parameters in openapi.yaml,
// the path's and the operation's.
func eachParam(f func(route string, p *openapi3.Parameter)) error {
	doc, err := catalog.Spec()
	if err != nil {
		return fmt.Errorf("read the routes' parameters: %w", err)
	}
	for route, item := range doc.Paths.Map() {
		if item.Get == nil {
			continue
		}
		for _, ref := range append(item.Parameters, item.Get.Parameters...) {
			if ref.Value != nil {
				f(route, ref.Value)
			}
		}
	}
	return nil
}

// limitsOf are route's bounded parameters in (query, header).
func limitsOf(route, in string) []paramLimit {
	m, err := specLimits()
	if err != nil {
		panic(err) // the embedded spec is read at every start; its tests parse it
	}
	return m[route][in]
}

// withinLimits reports whether value is within the limits the spec sets on
// route's parameter name in in; a parameter it does not bound is.
func withinLimits(route, in, name, value string) error {
	for _, p := range limitsOf(route, in) {
		if p.name == name {
			return p.check(value)
		}
	}
	return nil
}

// check is nil for a value within p's limits, else the EINVALID error naming them.
func (p paramLimit) check(v string) error {
	err := p.schema.VisitJSONString(v)
	if err == nil {
		return nil
	}
	eg := ""
	if p.schema.Example != nil {
		eg = fmt.Sprintf(", e.g. %s=%v", p.name, p.schema.Example)
	}
	var se *openapi3.SchemaError
	switch {
	case errors.As(err, &se) && se.SchemaField == "maxLength":
		return catalog.Errorf(catalog.EINVALID, "parameter %q is %d characters long; /openapi.yaml allows at most %d%s", p.name, len([]rune(v)), *p.schema.MaxLength, eg)
	case errors.As(err, &se) && se.SchemaField == "pattern":
		return catalog.Errorf(catalog.EINVALID, "parameter %q is not of the form %s that /openapi.yaml gives it%s", p.name, p.schema.Pattern, eg)
	}
	return catalog.Errorf(catalog.EINVALID, "parameter %q is not in the form /openapi.yaml gives it%s", p.name, eg)
}

// QueryLimits is the generated router's middleware, after the generated
// binding has read each parameter once (refusing one given twice, or it
// answered already): it answers 400 to a query parameter outside the limits
// the spec sets on its route, found by the route's template.
func (s *Server) QueryLimits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := withinQueryLimits(r, chi.RouteContext(r.Context()).RoutePattern()); err != nil {
			s.write(w, r, s.failedOn(r, err))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withinQueryLimits is the error (400) of a query parameter of the route
// with template route outside its limits in the spec. It reads the query
// without a map: a query with none of the bounded parameters costs no
// allocation. The values the handlers use are the binding's; this only checks
// them, as url.ParseQuery reads them (queryLookup).
func withinQueryLimits(r *http.Request, route string) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	for _, p := range limitsOf(route, "query") {
		v, ok := queryLookup(r.URL.RawQuery, p.name)
		if !ok {
			continue
		}
		if err := p.check(v); err != nil {
			return err
		}
	}
	// The handlers read an empty language (?language=) as a missing one;
	// it is not one of the parameter's values, so it is 400 here.
	if v, ok := queryLookup(r.URL.RawQuery, "language"); ok && v == "" {
		takes, err := languageRoutes()
		if err != nil {
			panic(err) // the embedded spec is read at every start; its tests parse it
		}
		if takes[route] {
			return unsupportedLanguage(v, strings.HasPrefix(route, "/v1/"))
		}
	}
	return nil
}

// failedOn is the answer to err on r's route: an error page on a page's
// route (outside /v1), else the envelope.
func (s *Server) failedOn(r *http.Request, err error) Answer {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		return failed(err)
	}
	return s.failedPage(r, err)
}

// queryLookup is key's first value in the raw query, as url.ParseQuery reads
// it (pairs with ';' or bad escapes skipped), and whether the query has key at
// all; it allocates only to unescape.
func queryLookup(raw, key string) (string, bool) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != key {
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v, true
		}
	}
	return "", false
}
