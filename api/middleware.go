package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/impl"
)

// recoverer turns a panic into a 500 JSON error; the server lives on.
func recoverer(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
						panic(v)
					}
					impl.WriteInternal(w, r, logger, http.StatusInternalServerError, "internal error", fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// statusWriter remembers the status; pooled so the hot path does not allocate it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

var writers = sync.Pool{New: func() any { return new(statusWriter) }}

// observe records each request's duration by route template and status, and logs
// it: 5xx at Error, 4xx at Info, the rest at Debug, so a busy server with the
// default level logs only what needs a look.
func observe(logger *slog.Logger, m *HTTPMetrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := writers.Get().(*statusWriter)
			sw.ResponseWriter, sw.status = w, 0
			next.ServeHTTP(sw, r)
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			sw.ResponseWriter = nil
			writers.Put(sw)

			route := "unmatched"
			if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			if c := impl.CaptureFrom(r.Context()); c != nil {
				c.Route = route
			}
			elapsed := time.Since(start)
			if m != nil {
				m.observe(route, status, elapsed)
			}
			level := slog.LevelDebug
			switch {
			case status >= 500:
				level = slog.LevelError
			case status >= 400:
				level = slog.LevelInfo
			}
			if logger.Enabled(r.Context(), level) {
				logger.LogAttrs(r.Context(), level, "request",
					slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.String("route", route), slog.Int("status", status),
					slog.Duration("duration", elapsed), slog.String("user_agent", r.UserAgent()))
			}
		})
	}
}

var statusText [600]string

func init() {
	for i := range statusText {
		statusText[i] = strconv.Itoa(i)
	}
}

func statusLabel(code int) string {
	if code >= 0 && code < len(statusText) {
		return statusText[code]
	}
	return strconv.Itoa(code)
}
