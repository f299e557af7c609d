// Package upstream is the HTTP client of an upstream in the public API's shape
// ({"status":200,"data":…} bodies, ?language= with case-sensitive codes and 404
// for an unknown one): bounded concurrency, a timeout per request, retries with
// exponential backoff and jitter, Retry-After honoured on 429 and 503, a polite
// User-Agent, and a bound on every body. An upstream is hostile input too: a body
// beyond the limit, a truncated one or a dropped connection is an error, never a
// partial result.
package upstream

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for Config's zero fields.
const (
	DefaultConcurrency    = 4
	DefaultRequestTimeout = 30 * time.Second
	DefaultRetries        = 4
	DefaultBackoff        = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxRetryAfter  = 2 * time.Minute
	// DefaultMaxBodyBytes is over ten times the largest real response (weapons
	// with every skin, 1.4 MB in en-US; language=all is about 18 times that).
	DefaultMaxBodyBytes = 64 << 20
)

// Config describes an upstream and how politely to fetch from it.
type Config struct {
	// BaseURL is the upstream's root, e.g. https://valorant-api.com.
	BaseURL string
	// UserAgent names the client; UserAgent(version, contact) makes one.
	UserAgent string
	// Concurrency bounds the requests in flight at once (0: DefaultConcurrency).
	Concurrency int
	// RequestTimeout bounds one attempt, headers and body (0: DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Retries is how many times a failed attempt is retried (0: DefaultRetries;
	// negative: none).
	Retries int
	// Backoff is the first retry's delay, doubled each retry up to MaxBackoff,
	// with jitter (0: the defaults).
	Backoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After waited for; a longer one ends the
	// request (0: DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// MaxBodyBytes bounds every body read (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MediaHosts are the hosts GetURL may fetch from besides the upstream's
	// own and its media host ("host" or "host:port"; HostPolicy).
	MediaHosts []string
	// Observe, when set, is told the outcome of every attempt: the status ("0"
	// for a transport error) and the body bytes read.
	Observe func(status string, bytes int64)
}

// UserAgent is the header refdata sends: its name and version, and the
// operator's contact URL, so an upstream's operator knows whom to ask.
func UserAgent(version, contact string) string {
	contact = cmp.Or(contact, "https://github.com/refdata/refdata")
	return "refdata/" + cmp.Or(version, "dev") + " (+" + contact + ")"
}

// Client fetches from one upstream. Safe for concurrent use.
type Client struct {
	cfg    Config
	base   *url.URL
	sem    chan struct{}
	policy *HostPolicy
	// catalogs fetches the upstream's own paths: the default transport (a
	// proxy from the environment applies), redirects on its host only.
	// media fetches GetURL's, as policy allows.
	catalogs, media *http.Client

	requests atomic.Int64
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: want an http or https URL", cfg.BaseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	cfg.UserAgent = cmp.Or(cfg.UserAgent, UserAgent("", ""))
	orDefault(&cfg.Concurrency, DefaultConcurrency)
	orDefault(&cfg.RequestTimeout, DefaultRequestTimeout)
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	orDefault(&cfg.Backoff, DefaultBackoff)
	orDefault(&cfg.MaxBackoff, DefaultMaxBackoff)
	orDefault(&cfg.MaxRetryAfter, DefaultMaxRetryAfter)
	orDefault(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	policy, err := NewHostPolicy(u.String(), cfg.MediaHosts)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, base: u, sem: make(chan struct{}, cfg.Concurrency), policy: policy, media: policy.client()}
	c.catalogs = &http.Client{CheckRedirect: c.sameHost}
	return c, nil
}

// maxCatalogRedirects is net/http's own limit, kept for the upstream's paths.
const maxCatalogRedirects = 10

// sameHost follows a redirect of the upstream's own paths only to its host
// and port, or to https on its host's default port (an upgrade).
func (c *Client) sameHost(req *http.Request, via []*http.Request) error {
	to := req.URL
	port := cmp.Or(to.Port(), defaultPort(to.Scheme))
	sameHost := strings.EqualFold(to.Hostname(), c.base.Hostname()) && to.User == nil
	samePort := port == cmp.Or(c.base.Port(), defaultPort(c.base.Scheme)) || to.Scheme == "https" && port == "443"
	switch {
	case len(via) >= maxCatalogRedirects:
		return refusef("more than %d redirects", maxCatalogRedirects-1)
	case !sameHost || !samePort:
		return refusef("redirect to %s, off the upstream's host %s", to.Redacted(), c.base.Host)
	}
	return nil
}

// orDefault sets *v to def when it is not positive.
func orDefault[T ~int | ~int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// BaseURL is the upstream's root as configured.
func (c *Client) BaseURL() string { return c.base.String() }

// Requests is the number of attempts made so far (retries included).
func (c *Client) Requests() int64 { return c.requests.Load() }

// Response is one final answer: a 2xx, a 304, or a 4xx other than 429.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// StatusError is a final answer that was not a success after every retry, or one
// that is never retried.
type StatusError struct {
	URL    string
	Status int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: status %d", e.URL, e.Status)
}

// Get fetches path (e.g. "/v1/weapons") with query and extra headers. It
// retries transport errors, truncated bodies, 5xx and 429 (waiting as
// Retry-After asks on 429 and 503) and returns the first other answer. check,
// when set, inspects a 200 body; its error is retried too (what a broken proxy
// answers). ctx bounds everything, the waits included.
func (c *Client) Get(ctx context.Context, path string, query url.Values, header http.Header, check func([]byte) error) (*Response, error) {
	u := *c.base
	u.Path += path
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	return c.get(ctx, c.catalogs, u.String(), header, check, nil)
}

// GetURL fetches an absolute URL on a host the client's HostPolicy allows
// (the media a catalog references), as Get fetches a path of the upstream.
// A URL, redirect or address the policy refuses is a *RefusedError, and
// nothing is sent to it. With hosts (nil: none), a host that is down is a
// *HostDownError with no request, and one that goes down is retried no more.
func (c *Client) GetURL(ctx context.Context, rawURL string, header http.Header, hosts *HostBreaker) (*Response, error) {
	if err := c.CheckURL(rawURL); err != nil {
		return nil, err
	}
	var b *breaking
	if hosts != nil {
		b = &breaking{hosts, HostOf(rawURL)}
	}
	return c.get(ctx, c.media, rawURL, header, nil, b)
}

// breaking is a request's host as its HostBreaker counts it.
type breaking struct {
	hosts *HostBreaker
	host  string
}

// CheckURL is the refusal GetURL would give rawURL before connecting, or nil.
func (c *Client) CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return refusef("not a URL")
	}
	return c.policy.Check(u)
}

// MediaHosts lists the hosts GetURL fetches from.
func (c *Client) MediaHosts() string { return c.policy.String() }

// MaxBodyBytes is the limit of every body read.
func (c *Client) MaxBodyBytes() int64 { return c.cfg.MaxBodyBytes }

// Do makes Client the HTTP doer of the client generated in gen/
// (gen.WithHTTPClient): a GET to this client's upstream, as Get makes it. Any
// other method or host is refused.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.Scheme != c.base.Scheme || req.URL.Host != c.base.Host {
		return nil, fmt.Errorf("upstream client: refusing %s %s (only GET to %s)", req.Method, req.URL.Redacted(), c.base.Host)
	}
	res, err := c.get(req.Context(), c.catalogs, req.URL.String(), req.Header, nil, nil)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status: http.StatusText(res.Status), StatusCode: res.Status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: res.Header, Body: io.NopCloser(bytes.NewReader(res.Body)), ContentLength: int64(len(res.Body)), Request: req,
	}, nil
}

func (c *Client) get(ctx context.Context, hc *http.Client, target string, header http.Header, check func([]byte) error, b *breaking) (*Response, error) {
	var last error
	for attempt := 0; ; attempt++ {
		if b != nil {
			if err := b.hosts.check(b.host); err != nil {
				return nil, fmt.Errorf("GET %s: %w", target, err)
			}
		}
		resp, wait, err := c.attempt(ctx, hc, target, header)
		if b != nil {
			b.hosts.record(b.host, err)
		}
		if err == nil && resp.Status == http.StatusOK && check != nil {
			if cerr := check(resp.Body); cerr != nil {
				err = fmt.Errorf("GET %s: %w", target, cerr)
				resp = nil
			}
		}
		if err == nil {
			return resp, nil
		}
		last = err
		var fatal *fatalError
		if errors.As(err, &fatal) || ctx.Err() != nil || attempt >= c.cfg.Retries {
			return nil, last
		}
		if wait < 0 {
			return nil, fmt.Errorf("%w (Retry-After is longer than the %s waited at most)", last, c.cfg.MaxRetryAfter)
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fmt.Errorf("%w (the next try, in %s, would pass the deadline)", last, wait.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (then %w)", last, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// SizeError is a body over Config.MaxBodyBytes; never retried.
type SizeError struct {
	URL   string
	Size  int64 // as the answer declared it; -1 when it did not
	Limit int64
}

func (e *SizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("GET %s: body is over the limit of %d bytes", e.URL, e.Limit)
	}
	return fmt.Sprintf("GET %s: body of %d bytes is over the limit of %d", e.URL, e.Size, e.Limit)
}

// fatalError is an answer retrying cannot fix (a body over the limit, a
// refusal).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// backoff is the delay before retry attempt+1: Backoff·2^attempt capped at
// MaxBackoff, jittered into [d/2, d) so many clients do not retry in step.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.Backoff << min(attempt, 20)
	if d <= 0 || d > c.cfg.MaxBackoff {
		d = c.cfg.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// attempt makes one request. wait > 0 is the delay Retry-After asked for, < 0
// one longer than MaxRetryAfter.
func (c *Client) attempt(ctx context.Context, hc *http.Client, target string, header http.Header) (_ *Response, wait time.Duration, _ error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("GET %s: %w", target, context.Cause(ctx))
	}
	defer func() { <-c.sem }()
	c.requests.Add(1)
	actx, cancel := context.WithTimeoutCause(ctx, c.cfg.RequestTimeout,
		fmt.Errorf("no complete answer within the request timeout of %s", c.cfg.RequestTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, target, nil)
	if err != nil {
		return nil, 0, &fatalError{err}
	}
	for k, vs := range header {
		if k != "User-Agent" {
			req.Header[k] = vs
		}
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	// No overall client timeout: RequestTimeout bounds each attempt.
	res, err := hc.Do(req)
	if err != nil {
		c.observe("0", 0)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the method and URL ours names
		}
		var refused *RefusedError
		if errors.As(err, &refused) {
			return nil, 0, &fatalError{fmt.Errorf("GET %s: %w", target, refused)}
		}
		return nil, 0, fmt.Errorf("GET %s: %w", target, causeOf(actx, err))
	}
	defer res.Body.Close()
	if res.ContentLength > c.cfg.MaxBodyBytes {
		c.observe(strconv.Itoa(res.StatusCode), 0)
		return nil, 0, &fatalError{&SizeError{URL: target, Size: res.ContentLength, Limit: c.cfg.MaxBodyBytes}}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, c.cfg.MaxBodyBytes+1))
	c.observe(strconv.Itoa(res.StatusCode), int64(len(body)))
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: status %d, body cut off after %d bytes: %w", target, res.StatusCode, len(body), causeOf(actx, err))
	}
	if int64(len(body)) > c.cfg.MaxBodyBytes {
		return nil, 0, &fatalError{&SizeError{URL: target, Size: -1, Limit: c.cfg.MaxBodyBytes}}
	}
	if s := res.StatusCode; s == http.StatusTooManyRequests || s >= 500 {
		if s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable {
			wait = retryAfter(res.Header.Get("Retry-After"), time.Now())
			if wait > c.cfg.MaxRetryAfter {
				wait = -1
			}
		}
		return nil, wait, &StatusError{URL: target, Status: s}
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: body}, 0, nil
}

func (c *Client) observe(status string, n int64) {
	if c.cfg.Observe != nil {
		c.cfg.Observe(status, n)
	}
}

// causeOf names the request timeout rather than "context deadline exceeded",
// once: net/http's error may be the cause already.
func causeOf(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}

// retryAfter parses Retry-After: delay-seconds or an HTTP date; 0 when absent
// or unparseable (the backoff applies).
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
