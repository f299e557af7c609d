// Package push tells held requests that another version is active: a wait
// (/v1/version?wait=) answers once the version record it names is no longer
// the active one, and a stream (/v1/version/stream) sends an event per
// activation. A Hub learns of activations from its repository's OnSwap.
// Which requests may be held, and how many, is the handlers' decision
// (package handler); a Hub only holds them.
package push

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// MaxWait is the longest wait a request may ask for.
const MaxWait = 120 * time.Second

// Hub is one repository's broadcast of activations. Its zero value is not
// ready: use New.
type Hub struct {
	repo   edition.Repository
	logger *slog.Logger
	once   sync.Once
	mu     sync.Mutex
	// next is closed at the next activation, made on demand, per kind.
	next  [2]chan struct{}
	event atomic.Pointer[Event]
	build sync.Mutex // one event rendered at a time
}

// Kinds of held request, in the order an activation wakes them.
const (
	streams = iota
	waits
)

// New returns repo's Hub; logger records a latest diff that cannot be read.
func New(repo edition.Repository, logger *slog.Logger) *Hub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{repo: repo, logger: logger}
}

// Watch has the Hub follow the repository's activations, once: call it
// before holding the first request.
func (h *Hub) Watch() {
	h.once.Do(func() {
		if sw, ok := h.repo.(edition.Swapping); ok {
			sw.OnSwap(h.swapped)
		}
	})
}

// swapped renders the new edition's event, then wakes the held requests; on
// a goroutine, as OnSwap's functions must not call the repository.
func (h *Hub) swapped() {
	go func() {
		h.Event()
		h.changed()
	}()
}

// changed wakes every held request: another edition is active.
func (h *Hub) changed() {
	h.mu.Lock()
	for i, c := range h.next {
		if c != nil {
			close(c)
			h.next[i] = nil
		}
	}
	h.mu.Unlock()
}

// wake returns a channel closed at the next activation; take it before
// reading the active edition, so an activation in between is not missed.
func (h *Hub) wake(kind int) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next[kind] == nil {
		h.next[kind] = make(chan struct{})
	}
	return h.next[kind]
}

// Unchanged says whether the version record of ed would be answered 304 to a
// request with these Accept-Encoding and If-None-Match values. edition.None
// has no version record, so nothing is unchanged: a wait is not held, and the
// router answers it 503 until a version is loaded.
func Unchanged(ed *edition.Edition, acceptEncoding, ifNoneMatch []string) bool {
	if len(ifNoneMatch) == 0 || ed.IsNone() {
		return false
	}
	res := representation.Response{Route: versionRecord, Body: ed.VersionBody()}
	status, _ := res.Negotiate(acceptEncoding, ifNoneMatch)
	return status == http.StatusNotModified
}

// versionRecord negotiates as /v1/version does: any encoding, identity too.
var versionRecord = &representation.Route{}

// Wait returns the active edition once its version record is no longer the
// one the request names (Unchanged), at the end of wait, or when done is
// closed.
func (h *Hub) Wait(done <-chan struct{}, wait time.Duration, acceptEncoding, ifNoneMatch []string) *edition.Edition {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		next := h.wake(waits)
		ed := h.repo.Active()
		if !Unchanged(ed, acceptEncoding, ifNoneMatch) {
			return ed
		}
		select {
		case <-next:
		case <-timer.C:
			return ed
		case <-done:
			return ed
		}
	}
}

// ParseWait reads the wait parameter: a Go duration or whole seconds, 0 to
// MaxWait ("": 0).
func ParseWait(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseUint(v, 10, 16)
		d, err = time.Duration(n)*time.Second, nerr
	}
	switch {
	case err != nil || d < 0:
		return 0, catalog.Errorf(catalog.EINVALID, "wait %q is not a duration; give whole seconds (60) or a Go duration (60s, 2m), at most %s", v, durationText(MaxWait))
	case d > MaxWait:
		return 0, catalog.Errorf(catalog.EINVALID, "wait %s is longer than %s, the longest this server holds a request; ask for at most wait=%s", durationText(d), durationText(MaxWait), durationText(MaxWait))
	}
	return d, nil
}

// durationText writes whole seconds as "120s", not Go's "2m0s".
func durationText(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
