package follow

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/store"
)

// stateReadWait bounds a scrape's wait for the store: a slow store leaves the
// state last read in the scrape rather than holding the scrape.
const stateReadWait = 2 * time.Second

// RegisterStateMetrics exports the sync state st holds (State), read at each
// scrape, so every replica of a store says whether its sync works, whichever
// process runs it: a timer, a CronJob, a long-running sync, serve --sync.
// served names the version this process serves ("" while none), for
// refdata_sync_behind; nil in a process that serves nothing. Without a state
// (no sync has run) the series are absent.
func RegisterStateMetrics(reg prometheus.Registerer, st store.Backend, served func() string) {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("refdata_"+name, help, labels, nil)
	}
	c := &stateCollector{st: st, served: served,
		attempt: desc("sync_last_attempt_timestamp_seconds", "When the last sync of the store started, however it ended (Unix time)."),
		success: desc("sync_last_success_timestamp_seconds", "When the last sync of the store that ended well started: published, unchanged or already stored (Unix time)."),
		failure: desc("sync_last_failure_timestamp_seconds", "When a sync of the store last failed, by reason: unreachable, status, invalid, shrink, moving, timeout, store (Unix time).", "reason"),
		failing: desc("sync_consecutive_failures", "Syncs of the store that failed since the last one that ended well."),
		info:    desc("sync_upstream_version_info", "The upstream's version as the last sync saw it; always 1, the labels say which.", "upstream", "manifest_id"),
		behind:  desc("sync_behind", "1 when the upstream's version as last seen is not the version this replica serves."),
		media:   desc("sync_media_files", "The media URLs of the last media pass by outcome: known (mirrored before), fetched; not mirrored: deferred (failed for good before, waiting out a backoff), and by why: refused, type, status, unreachable, too big, deadline, store.", "outcome"),
		mediaAt: desc("sync_media_last_pass_timestamp_seconds", "When the last media pass ran (Unix time)."),
	}
	reg.MustRegister(c)
}

type stateCollector struct {
	st     store.Backend
	served func() string

	mu      sync.Mutex
	last    *State
	reading chan struct{} // closed when the read under way ends; nil when none is

	attempt, success, failure, failing, info, behind, media, mediaAt *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.attempt, c.success, c.failure, c.failing, c.info, c.behind, c.media, c.mediaAt} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	if s == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	stamp := func(d *prometheus.Desc, t time.Time, labels ...string) {
		if !t.IsZero() {
			gauge(d, float64(t.UnixNano())/1e9, labels...)
		}
	}
	stamp(c.attempt, s.AttemptedAt)
	stamp(c.success, s.SyncedAt)
	for reason, at := range s.FailedAt {
		stamp(c.failure, at, reason)
	}
	gauge(c.failing, float64(s.Failures))
	upstreamID := s.UpstreamManifestID
	if upstreamID == "" {
		upstreamID = s.ManifestID // a state written before it was recorded
	}
	if upstreamID != "" {
		gauge(c.info, 1, s.Upstream, upstreamID)
		if c.served != nil {
			behind := 0.0
			if !strings.EqualFold(c.served(), upstreamID) {
				behind = 1
			}
			gauge(c.behind, behind)
		}
	}
	if m := s.Media; m != nil {
		for outcome, n := range m.Files {
			gauge(c.media, float64(n), outcome)
		}
		stamp(c.mediaAt, m.At)
	}
}

// read reads the state, waiting at most stateReadWait; the state read last
// when the store is slow or failing (refdata_store_up says so). Scrapes that
// come while a read is under way share it (one read of the store at a time);
// a scrape that comes after a read ended makes its own, never the cached one.
func (c *stateCollector) read() *State {
	c.mu.Lock()
	done := c.reading
	if done == nil {
		done = make(chan struct{})
		c.reading = done
		go func() {
			s, err := ReadState(c.st)
			c.mu.Lock()
			if err == nil {
				c.last = s
			}
			c.reading = nil
			c.mu.Unlock()
			close(done)
		}()
	}
	c.mu.Unlock()
	t := time.NewTimer(stateReadWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	return c.cached()
}

func (c *stateCollector) cached() *State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
