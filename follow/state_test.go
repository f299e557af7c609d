package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/upstream"
)

// TestReasons: each kind of error a sync meets is classed as the runbook
// names it, whatever wraps it; the sync's own deadline wins over the step it
// stopped.
func TestReasons(t *testing.T) {
	t.Parallel()
	deadline, cancel := context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("%w of 15m", errDeadline))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"a status", context.Background(), fetchFailed(fmt.Errorf("fetch: %w", &upstream.StatusError{URL: "u", Status: 502})), ReasonStatus},
		{"a refused connection", context.Background(), fetchFailed(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), ReasonUnreachable},
		{"a body cut off", context.Background(), fetchFailed(fmt.Errorf("GET u: body cut off: %w", io.ErrUnexpectedEOF)), ReasonUnreachable},
		{"an HTML page", context.Background(), fetchFailed(fmt.Errorf("GET u: %w", upstream.ErrHTML)), ReasonInvalid},
		{"a wrong envelope", context.Background(), fetchFailed(fmt.Errorf("GET u: %w", &envelope.Error{Reason: "wrong envelope"})), ReasonInvalid},
		{"a body over --max-body-bytes", context.Background(), fetchFailed(fmt.Errorf("fetch: %w", &upstream.SizeError{URL: "u", Size: -1, Limit: 64})), ReasonInvalid},
		{"a redirect off the upstream's host", context.Background(), fetchFailed(fmt.Errorf("GET u: %w", &upstream.RefusedError{Reason: "redirect to v"})), ReasonInvalid},
		{"a refusal by validation", context.Background(), importFailed(fmt.Errorf("validate: %w: 3 problems", pipeline.ErrRejected)), ReasonInvalid},
		{"the shrink guard", context.Background(), importFailed(fmt.Errorf("diff: %w: %w: maps", pipeline.ErrRejected, pipeline.ErrShrinkGuard)), ReasonShrink},
		{"the store's lock", context.Background(), importFailed(errors.New("lock store: gave up after --lock-timeout 1m")), ReasonStore},
		{"an error of no class", context.Background(), errors.New("record the sync state: disk full"), ReasonStore},
		{"the sync's deadline", deadline, fetchFailed(fmt.Errorf("GET u: %w", context.Canceled)), ReasonTimeout},
	} {
		if got := reasonOf(tc.ctx, fmt.Errorf("sync: %w", tc.err)); got != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.name, got, tc.want)
		}
	}
}
