package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream"
)

// State is what sync keeps in the store (store.Backend.SyncState) between
// syncs: where it left off, and what an operator watches. Every attempt
// writes it, failures included, so every replica of the store exports it
// (StateMetrics) whichever process ran the sync.
type State struct {
	Upstream    string    `json:"upstream"`
	ManifestID  string    `json:"manifestId"` // the upstream's version last synced
	ETag        string    `json:"etag,omitempty"`
	ContentHash string    `json:"contentHash"`
	CheckedAt   time.Time `json:"checkedAt"` // the last whole fetch
	SyncedAt    time.Time `json:"syncedAt"`  // the last sync that ended well

	AttemptedAt time.Time `json:"attemptedAt,omitzero"` // the last sync, however it ended
	// Outcome is the last sync's: a Result.Outcome, or "failed".
	Outcome string `json:"outcome,omitempty"`
	// Failures counts the syncs that failed since the last one that ended well.
	Failures    int      `json:"consecutiveFailures,omitempty"`
	LastFailure *Failure `json:"lastFailure,omitempty"`
	// FailedAt is when a sync last failed for each reason.
	FailedAt map[string]time.Time `json:"failedAt,omitempty"`
	// UpstreamManifestID is the upstream's version as last seen, by a sync
	// that failed too: the version the store should come to serve.
	UpstreamManifestID string `json:"upstreamManifestId,omitempty"`
	// Media is the last media pass (--media).
	Media *MediaState `json:"media,omitempty"`
}

// Failure is why a sync failed: its reason class (the Reason constants) and
// its error as logged.
type Failure struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Error  string    `json:"error"`
}

// The reasons a sync fails, as State and the metrics class them; the
// runbook in docs/operations.md says what to do for each.
const (
	// ReasonUnreachable: no answer from the upstream: DNS, connection, TLS,
	// a request timeout, a body cut off, after every retry.
	ReasonUnreachable = "unreachable"
	// ReasonStatus: the upstream answered an error status (5xx or 429 after
	// every retry, or a 4xx).
	ReasonStatus = "status"
	// ReasonInvalid: what the upstream sent is not a version refdata takes:
	// not JSON (an HTML page), a wrong envelope, over a limit (a body over
	// --max-body-bytes), a redirect off its host or in a loop, refused by
	// validation.
	ReasonInvalid = "invalid"
	// ReasonShrink: the shrink guard refused the version (--allow-shrink).
	ReasonShrink = "shrink"
	// ReasonMoving: the upstream's version moved during every fetch.
	ReasonMoving = "moving"
	// ReasonTimeout: the sync's own deadline (--sync-timeout) passed.
	ReasonTimeout = "timeout"
	// ReasonStore: the store: its lock, a read, a write.
	ReasonStore = "store"
)

// Reasons lists every reason class.
var Reasons = []string{ReasonUnreachable, ReasonStatus, ReasonInvalid, ReasonShrink, ReasonMoving, ReasonTimeout, ReasonStore}

// MediaState is the last media pass as the state records it: the media URLs
// of the snapshot by outcome (MediaResult.Counts). "known" (mirrored before)
// and "fetched" are mirrored; "deferred" were not tried (they failed for good
// before and wait out a backoff); each of MediaClasses counts the URLs the
// pass did not mirror for that class of reason.
type MediaState struct {
	At    time.Time      `json:"at"`
	Files map[string]int `json:"files"`
}

// mediaState is what a media pass's result records.
func mediaState(r *MediaResult, at time.Time) *MediaState {
	return &MediaState{At: at, Files: r.Counts()}
}

// failure is a sync's error with its reason class.
type failure struct {
	reason string
	err    error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// failed classes err with reason.
func failed(reason string, err error) error {
	if err == nil {
		return nil
	}
	return &failure{reason, err}
}

// fetchFailed classes an error of a request to the upstream.
func fetchFailed(err error) error {
	var se *upstream.StatusError
	var ee *envelope.Error
	var size *upstream.SizeError
	var refused *upstream.RefusedError
	switch {
	case errors.As(err, &se):
		return failed(ReasonStatus, err)
	case errors.Is(err, upstream.ErrHTML), errors.As(err, &ee), errors.Is(err, errInvalid),
		errors.As(err, &size), errors.As(err, &refused):
		return failed(ReasonInvalid, err)
	}
	return failed(ReasonUnreachable, err)
}

// importFailed classes an error of the import of a fetched snapshot.
func importFailed(err error) error {
	switch {
	case errors.Is(err, pipeline.ErrShrinkGuard):
		return failed(ReasonShrink, err)
	case errors.Is(err, pipeline.ErrRejected):
		return failed(ReasonInvalid, err)
	}
	return failed(ReasonStore, err)
}

// errInvalid marks what the upstream sent that is not a snapshot refdata
// takes (beyond what the client's checks find).
var errInvalid = errors.New("invalid answer")

// errDeadline is the cause of a sync's context when its deadline passes.
var errDeadline = errors.New("sync gave up after its deadline")

// reasonOf is err's reason class; a sync stopped by its deadline is
// ReasonTimeout whatever step it was in.
func reasonOf(ctx context.Context, err error) string {
	if errors.Is(context.Cause(ctx), errDeadline) {
		return ReasonTimeout
	}
	if f, ok := errors.AsType[*failure](err); ok {
		return f.reason
	}
	return ReasonStore
}

// record writes into st how a sync that started at now ended.
func record(st *State, res *Result, err error, reason string, now time.Time) {
	st.AttemptedAt = now
	if err == nil {
		st.Outcome, st.Failures = res.Outcome, 0
		if res.Outcome != "held" {
			st.SyncedAt = now
		}
		return
	}
	st.Outcome = "failed"
	st.Failures++
	st.LastFailure = &Failure{At: now, Reason: reason, Error: err.Error()}
	st.FailedAt = maps.Clone(st.FailedAt)
	if st.FailedAt == nil {
		st.FailedAt = map[string]time.Time{}
	}
	st.FailedAt[reason] = now
}

// ReadState reads the sync state a store holds; nil when no sync has written
// one.
func ReadState(b store.Backend) (*State, error) {
	raw, err := b.SyncState()
	if err != nil || raw == nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("sync state: %w", err)
	}
	return &s, nil
}
