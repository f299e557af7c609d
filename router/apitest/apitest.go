// Package apitest is the one place tests check HTTP traffic against
// openapi.yaml: Checker.Do validates each request and response with
// kin-openapi and records which operation answered with which status.
package apitest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// Checker validates traffic against the spec and remembers what it saw.
type Checker struct {
	doc    *openapi3.T
	router routers.Router

	mu   sync.Mutex
	seen map[string]bool // "operationId status" answered
}

// New loads the embedded spec.
func New(t testing.TB) *Checker {
	t.Helper()
	registerHTML.Do(func() {
		openapi3filter.RegisterBodyDecoder("text/html", decodeHTML)
		openapi3filter.RegisterBodyDecoder("text/event-stream", decodeEvents)
		openapi3filter.RegisterBodyDecoder("application/x-ndjson", decodeLines)
	})
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	// The router must match any host, and the spec is shared: a copy without servers.
	cp := *doc
	cp.Servers = nil
	r, err := gorillamux.NewRouter(&cp)
	if err != nil {
		t.Fatalf("router from openapi.yaml: %v", err)
	}
	return &Checker{doc: &cp, router: r, seen: map[string]bool{}}
}

// userAgentRule is the spec's one security scheme: a non-blank User-Agent.
func userAgentRule(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	ua := in.RequestValidationInput.Request.Header.Values("User-Agent")
	if len(ua) == 0 || strings.TrimSpace(ua[0]) == "" {
		return errors.New("no User-Agent")
	}
	return nil
}

// Do serves req with h and validates both sides. A request the spec rejects
// must get a 4xx; a response must match the operation's statuses, headers and
// schemas. Paths outside the spec answer 404 or 405 (an error), or 301 from a
// trailing slash to the route without it.
func (c *Checker) Do(t testing.TB, h http.Handler, req *http.Request) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	return c.Check(t, req, res, rec.Body.Bytes())
}

// Check validates an answer req got elsewhere, as Do does (a stream read in
// part, say); res.Body is replaced by body.
func (c *Checker) Check(t testing.TB, req *http.Request, res *http.Response, body []byte) *http.Response {
	t.Helper()
	res.Body = io.NopCloser(bytes.NewReader(body))
	method := req.Method
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s %s: %d with X-Content-Type-Options %q; every answer has nosniff", method, req.URL, res.StatusCode, got)
	}
	if method == http.MethodOptions {
		c.checkPreflight(t, req, res, body)
		return res
	}
	lookup := req.Clone(context.Background())
	if method == http.MethodHead {
		lookup.Method = http.MethodGet
		if len(body) != 0 {
			t.Errorf("%s %s: HEAD answered with a %d-byte body", method, req.URL, len(body))
		}
	}
	route, pathParams, err := c.router.FindRoute(lookup)
	if err != nil {
		switch res.StatusCode {
		case http.StatusMovedPermanently:
			c.checkRedirect(t, req, res, body)
		case http.StatusNotFound, http.StatusMethodNotAllowed:
			c.CheckError(t, req, res, body)
		default:
			t.Errorf("%s %s: outside the spec (%v) but answered %d", method, req.URL, err, res.StatusCode)
			c.CheckError(t, req, res, body)
		}
		return res
	}
	canonicalEnums(route.Operation, lookup)
	in := &openapi3filter.RequestValidationInput{
		Request:    lookup,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc: userAgentRule,
			MultiError:         true,
		},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		if res.StatusCode < 400 || res.StatusCode >= 500 {
			t.Errorf("%s %s: the spec rejects this request (%v) but it answered %d", method, req.URL, err, res.StatusCode)
		}
	}
	// A body already validated for this operation and status (by a hash of it
	// as sent and decoded) is not walked again; headers always are.
	enc := res.Header.Get("Content-Encoding")
	ct := res.Header.Get("Content-Type")
	rawKey := validatedKey(route.Operation.OperationID, res.StatusCode, ct+"\x00"+enc, body)
	_, known := validated.Load(rawKey)
	decoded := body
	if enc != "" && method != http.MethodHead && res.StatusCode == http.StatusOK {
		if !known {
			decoded = decode(t, enc, body)
		}
		ae := req.Header.Values("Accept-Encoding")
		if !acceptable(ae, enc) && !(len(ae) == 0 && compressedOnly[route.Operation.OperationID]) {
			t.Errorf("%s %s: Content-Encoding %s not asked for by Accept-Encoding %q", method, req.URL, enc, req.Header.Values("Accept-Encoding"))
		}
	}
	key := rawKey
	if !known {
		key = validatedKey(route.Operation.OperationID, res.StatusCode, ct, decoded)
		_, known = validated.Load(key)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(decoded)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   known || method == http.MethodHead || res.StatusCode == http.StatusNotModified,
		},
	}
	err = openapi3filter.ValidateResponse(context.Background(), out)
	if err == nil && !out.Options.ExcludeResponseBody && ct == "application/gzip" {
		// kin-openapi asks no decoder for a binary body.
		err = checkArchive(bytes.NewReader(decoded))
	}
	if err != nil {
		t.Errorf("%s %s: response %d does not match openapi.yaml: %v\nbody: %.300s", method, req.URL, res.StatusCode, err, body)
	} else if !out.Options.ExcludeResponseBody {
		validated.Store(key, true)
		validated.Store(rawKey, true)
	}
	if res.StatusCode >= 400 {
		c.CheckError(t, req, res, body)
	}
	if res.StatusCode == http.StatusNotModified && len(body) != 0 {
		t.Errorf("%s %s: 304 with a body", method, req.URL)
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %d", route.Operation.OperationID, res.StatusCode)] = true
	c.mu.Unlock()
	return res
}

// compressedOnly are the operations whose bodies openapi.yaml says are sent
// compressed only: gzip to a request without Accept-Encoding.
var compressedOnly = map[string]bool{"getBulk": true}

// validated holds the keys of bodies that passed validation, for every Checker.
var validated sync.Map

// keySeeds make a key 128 bits of maphash: a collision, which would skip a
// body's validation, is out of reach, at a tenth of SHA-256's cost.
var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func validatedKey(operation string, status int, contentType string, body []byte) [2]uint64 {
	var k [2]uint64
	for i, seed := range keySeeds {
		var h maphash.Hash
		h.SetSeed(seed)
		fmt.Fprintf(&h, "%s\x00%d\x00%s\x00", operation, status, contentType)
		h.Write(body)
		k[i] = h.Sum64()
	}
	return k
}

// Effort is what tests compress bodies at: representation.Fast with -short
// (the protocol, not the ratio, is tested), else Best, what the service uses.
func Effort() representation.Effort {
	if testing.Short() {
		return representation.Fast
	}
	return representation.Best
}

// pagePath is the spec's rule (info.description) for the paths whose errors
// are HTML pages.
func pagePath(path string) bool {
	if !strings.HasPrefix(path, "/") || path == "/v1" || strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/media/") {
		return false
	}
	switch path {
	case "/openapi.yaml", "/openapi.json", "/healthz", "/readyz", "/metrics":
		return false
	}
	return true
}

// requestPath is the path req asks for, of its raw target (URL.Opaque) if any.
func requestPath(req *http.Request) string {
	if req.URL.Opaque == "" {
		return req.URL.Path
	}
	p, _, _ := strings.Cut(req.URL.Opaque, "?")
	if d, err := url.PathUnescape(p); err == nil {
		return d
	}
	return p
}

// CheckError validates an error answer as the spec has it for the request's
// path: an error page (CheckErrorPage) or the JSON envelope; tests call it for
// a request refused before routing.
func (c *Checker) CheckError(t testing.TB, req *http.Request, res *http.Response, body []byte) {
	t.Helper()
	if pagePath(requestPath(req)) {
		c.CheckErrorPage(t, req, res, body)
		return
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: error answered with Content-Type %q, want application/json", req.Method, req.URL, ct)
	}
	c.checkEnvelope(t, req, res.StatusCode, body)
}

// CheckErrorPage holds an error page to the spec's PageError: never cached,
// the status under a heading, a link back to / (and from a changelog to /changes).
func (c *Checker) CheckErrorPage(t testing.TB, req *http.Request, res *http.Response, body []byte) {
	t.Helper()
	for name, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("%s %s: error page with %s %q, want %q", req.Method, req.URL, name, got, want)
		}
	}
	if req.Method == http.MethodHead {
		return
	}
	doc, err := decodeHTML(bytes.NewReader(body), nil, nil, nil)
	if err != nil {
		t.Errorf("%s %s: error page: %v\nbody: %.300s", req.Method, req.URL, err, body)
		return
	}
	page := doc.(string)
	want := []string{"<h1>", strconv.Itoa(res.StatusCode), `<a href="/">`}
	if strings.HasPrefix(requestPath(req), "/changes/") {
		want = append(want, `<a href="/changes">`)
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("%s %s: the %d page has no %s\nbody: %.300s", req.Method, req.URL, res.StatusCode, w, body)
		}
	}
}

// checkRedirect holds a 301 to the spec's trailing-slash rule.
func (c *Checker) checkRedirect(t testing.TB, req *http.Request, res *http.Response, body []byte) {
	t.Helper()
	path := strings.TrimRight(req.URL.Path, "/")
	want := strings.TrimRight(req.URL.EscapedPath(), "/")
	if req.URL.RawQuery != "" {
		want += "?" + req.URL.RawQuery
	}
	loc := res.Header.Get("Location")
	if !strings.HasSuffix(req.URL.Path, "/") || loc != want {
		t.Errorf("%s %s: 301 to %q, want a redirect only from a trailing slash, to %q", req.Method, req.URL, loc, want)
		return
	}
	if !pagePath(path) && !strings.HasPrefix(path, "/v1/") {
		t.Errorf("%s %s: 301 from a document or probe", req.Method, req.URL)
	}
	target, err := http.NewRequest(http.MethodGet, loc, nil)
	if err == nil {
		_, _, err = c.router.FindRoute(target)
	}
	if err != nil {
		t.Errorf("%s %s: 301 to %s, which is not a route of the spec: %v", req.Method, req.URL, loc, err)
	}
	if len(body) != 0 {
		t.Errorf("%s %s: 301 with a %d-byte body", req.Method, req.URL, len(body))
	}
}

// checkEnvelope validates an error body against the Error schema and its
// status field against the response's.
func (c *Checker) checkEnvelope(t testing.TB, req *http.Request, status int, body []byte) {
	t.Helper()
	if req.Method == http.MethodHead {
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s: error body is not JSON: %v: %q", req.Method, req.URL, err, body)
		return
	}
	if err := c.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
		t.Errorf("%s %s: error body does not match Error: %v", req.Method, req.URL, err)
	}
	var e struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	if e.Status != status || e.Error == "" {
		t.Errorf("%s %s: error body %s does not carry status %d and a message", req.Method, req.URL, body, status)
	}
}

// Unexercised lists "operationId status" for every status an operation of the spec
// documents that no request through this Checker has produced.
func (c *Checker) Unexercised() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code := range op.Responses.Map() {
				if _, err := strconv.Atoi(code); err != nil {
					missing = append(missing, fmt.Sprintf("%s %s: status %q is not a number", method, path, code))
				} else if key := op.OperationID + " " + code; !c.seen[key] {
					missing = append(missing, key)
				}
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// checkPreflight holds a CORS preflight to openapi.yaml's policy.
func (c *Checker) checkPreflight(t testing.TB, req *http.Request, res *http.Response, body []byte) {
	t.Helper()
	if res.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Errorf("OPTIONS %s: %d with %d bytes, want 204 and no body", req.URL, res.StatusCode, len(body))
	}
	for name, want := range map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("OPTIONS %s: %s = %q, want %q", req.URL, name, got, want)
		}
	}
	if !strings.Contains(c.doc.Info.Description, "OPTIONS") {
		t.Error("openapi.yaml does not document the CORS preflight")
	}
}

// decode undoes a content coding, failing the test when the bytes are not valid.
func decode(t testing.TB, enc string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Errorf("gzip body: %v", err)
			return nil
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		t.Errorf("unknown Content-Encoding %q", enc)
		return nil
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Errorf("%s body: %v", enc, err)
	}
	return out
}

// acceptable reports whether Accept-Encoding names the coding (or *) without q=0.
func acceptable(values []string, enc string) bool {
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(item), ";")
			name = strings.TrimSpace(name)
			if strings.EqualFold(name, enc) || name == "*" {
				return !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") || strings.Contains(params, "q=0.")
			}
		}
	}
	return false
}

var registerHTML sync.Once

// decodeHTML lets the validator read text/html bodies and holds each to what
// every page must be: a UTF-8 HTML5 document with a language, a title and a
// viewport for phones.
func decodeHTML(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	doc := string(b)
	if !utf8.ValidString(doc) {
		return nil, errors.New("the page is not UTF-8")
	}
	lower := strings.ToLower(doc)
	for _, want := range []string{`<html lang="`, `<meta charset="utf-8">`, `<meta name="viewport" content="width=device-width, initial-scale=1">`, "<title>"} {
		if !strings.Contains(lower, want) {
			return nil, fmt.Errorf("the page has no %s", want)
		}
	}
	switch {
	case !strings.HasPrefix(lower, "<!doctype html>"):
		return nil, errors.New("the page does not start with <!doctype html>")
	case !strings.HasSuffix(strings.TrimSpace(lower), "</html>"):
		return nil, errors.New("the page does not end with </html>")
	case strings.Count(lower, "<title>") != 1 || strings.Contains(lower, "<title></title>"):
		return nil, errors.New("the page needs exactly one non-empty <title>")
	}
	return doc, nil
}

// decodeLines lets the validator read NDJSON bodies, whose schema in
// openapi.yaml is a line's: each line is held to it (and must end in "\n"),
// and the validator gets the first. The bodies tests see have lines.
func decodeLines(body io.Reader, _ http.Header, schema *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return nil, fmt.Errorf("an NDJSON body of %d bytes that does not end in a newline", len(b))
	}
	var first any
	for i, line := range bytes.Split(b[:len(b)-1], []byte("\n")) {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("line %d is not JSON: %w: %.100q", i+1, err, line)
		}
		if err := schema.Value.VisitJSON(v); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if i == 0 {
			first = v
		}
	}
	return first, nil
}

// decodeEvents lets the validator read text/event-stream bodies and holds
// each event to the operation's description: id, event: version and one data
// line of a VersionEvent naming the id; comments between.
func decodeEvents(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	doc, err := catalog.Spec()
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n\n")) {
		return nil, fmt.Errorf("the stream does not end at an event's end: %.100q", b)
	}
	for _, block := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		fields := map[string]string{}
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, ":") {
				continue
			}
			name, value, ok := strings.Cut(line, ": ")
			if _, dup := fields[name]; !ok || dup {
				return nil, fmt.Errorf("event line %q is not one `name: value` of its event", line)
			}
			fields[name] = value
		}
		if len(fields) == 0 {
			continue // comments alone
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(fields["data"]), &data); err != nil || len(fields) != 3 || fields["event"] != "version" {
			return nil, fmt.Errorf("event %q is not id, event: version and JSON data", block)
		}
		if err := doc.Components.Schemas["VersionEvent"].Value.VisitJSON(data); err != nil {
			return nil, fmt.Errorf("event data does not match VersionEvent: %w", err)
		}
		if data["manifestId"] != fields["id"] {
			return nil, fmt.Errorf("event id %s names another version than its data %s", fields["id"], fields["data"])
		}
	}
	return string(b), nil
}

// Forward returns a handler that sends each request to the server at base
// and copies its answer back, so Do can check a running server. The client
// must neither decompress nor follow redirects: headers go as written. A
// request whose context ends is abandoned (its client leaves), not an error.
func Forward(t testing.TB, client *http.Client, base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out, err := http.NewRequestWithContext(req.Context(), req.Method, base+req.URL.RequestURI(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out.Header = req.Header.Clone()
		out.Host = req.Host
		if _, ok := out.Header["User-Agent"]; !ok {
			out.Header["User-Agent"] = []string{""} // send none, not Go's default
		}
		res, err := client.Do(out)
		if err != nil {
			if req.Context().Err() == nil {
				t.Errorf("%s %s: %v", req.Method, out.URL, err)
			}
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		if _, err := io.Copy(w, res.Body); err != nil && req.Context().Err() == nil {
			t.Errorf("%s %s: body: %v", req.Method, out.URL, err)
		}
	})
}

// canonicalEnums rewrites query values to their enum's spelling when they
// differ in letter case only, which the server accepts and an enum cannot say.
func canonicalEnums(op *openapi3.Operation, req *http.Request) {
	q := req.URL.Query()
	changed := false
	for _, pr := range op.Parameters {
		p := pr.Value
		if p == nil || p.In != "query" || p.Schema == nil || p.Schema.Value == nil {
			continue
		}
		vs := q[p.Name]
		for i, v := range vs {
			for _, e := range p.Schema.Value.Enum {
				if es, ok := e.(string); ok && es != v && strings.EqualFold(es, v) {
					vs[i] = es
					changed = true
				}
			}
		}
	}
	if changed {
		req.URL.RawQuery = q.Encode()
	}
}

// checkArchive holds an export to a complete gzip'd tar of JSON files with
// clean relative paths, version.json among them.
func checkArchive(body io.Reader) error {
	zr, err := gzip.NewReader(body)
	if err != nil {
		return fmt.Errorf("export: not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("export: not a complete tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(h.Name) {
			return fmt.Errorf("export: entry %q is not a regular file with a clean path", h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("export: %s: %w", h.Name, err)
		}
		if !json.Valid(b) {
			return fmt.Errorf("export: %s is not JSON", h.Name)
		}
		seen[h.Name] = true
	}
	if !seen["version.json"] {
		return errors.New("export: no version.json")
	}
	return nil
}

// Stream reads a text/event-stream answer event by event; Raw keeps what was
// read, for Check once the test has read what it wants.
type Stream struct {
	br  *bufio.Reader
	Raw []byte
}

// NewStream reads res's body.
func NewStream(res *http.Response) *Stream { return &Stream{br: bufio.NewReader(res.Body)} }

// Next reads the next event, skipping comments, and returns its fields.
func (s *Stream) Next() (map[string]string, error) {
	fields := map[string]string{}
	for {
		line, err := s.br.ReadString('\n')
		s.Raw = append(s.Raw, line...)
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && len(fields) > 0:
			return fields, nil
		case line == "" || strings.HasPrefix(line, ":"):
		default:
			name, value, _ := strings.Cut(line, ": ")
			fields[name] = value
		}
	}
}
