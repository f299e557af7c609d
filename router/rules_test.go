package router_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// fetchStatus gets target from h, validated against openapi.yaml, and fails unless
// it answers want.
func fetchStatus(t *testing.T, check *apitest.Checker, h http.Handler, target string, want int) (*http.Response, []byte) {
	t.Helper()
	res := check.Do(t, h, get(target))
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", target, res.StatusCode, body, want)
	}
	return res, body
}

// listData is the items of a list body, each as its bytes.
func listData(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var env struct{ Data []json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}

// TestLevelBorderQuery: /v1/levelborders?level=N is the border the contract's
// rule picks from the list (the greatest startingLevel ≤ N, the first listed
// among equals), byte for byte /v1/levelborders/{uuid} in the same language,
// for every border's startingLevel and its neighbours, 0 and huge levels; 404
// below the lowest, 400 for anything but decimal digits; the same under the
// pinned prefix.
func TestLevelBorderQuery(t *testing.T) {
	t.Parallel()
	st := served(t)
	check := apitest.New(t)
	h := testRouter(t, st, nil)
	_, body := fetchStatus(t, check, h, "/v1/levelborders", http.StatusOK)
	type border struct {
		UUID          string  `json:"uuid"`
		StartingLevel float64 `json:"startingLevel"`
	}
	var borders []border
	levels := []string{"0", "1099511627776", "99999999999999999999999999", strings.Repeat("9", 32)}
	for _, raw := range listData(t, body) {
		var b border
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		borders = append(borders, b)
		for _, d := range []float64{-1, 0, 1} {
			if l := b.StartingLevel + d; l >= 0 {
				levels = append(levels, fmt.Sprint(l))
			}
		}
	}
	if len(borders) < 2 {
		t.Fatalf("%d level borders in the sample, want several", len(borders))
	}
	byHand := func(level string) string {
		var n float64
		_, _ = fmt.Sscan(level, &n)
		best := -1
		for i, b := range borders {
			if b.StartingLevel <= n && (best < 0 || b.StartingLevel > borders[best].StartingLevel) {
				best = i
			}
		}
		if best < 0 {
			return ""
		}
		return borders[best].UUID
	}
	pinned := "/v1/versions/" + st.Active().ManifestID
	found, below := 0, 0
	for _, level := range levels {
		for _, lang := range []string{"", "&language=ja-JP"} {
			want := byHand(level)
			target := "/v1/levelborders?level=" + level + lang
			if want == "" {
				below++
				_, b := fetchStatus(t, check, h, target, http.StatusNotFound)
				if !bytes.Contains(b, []byte("lowest starts at level")) {
					t.Errorf("GET %s: %s, want the lowest level named", target, b)
				}
				continue
			}
			found++
			res, got := fetchStatus(t, check, h, target, http.StatusOK)
			item, wantBody := fetchStatus(t, check, h, "/v1/levelborders/"+want+"?"+strings.TrimPrefix(lang, "&"), http.StatusOK)
			if !bytes.Equal(got, wantBody) || res.Header.Get("ETag") != item.Header.Get("ETag") {
				t.Errorf("GET %s: not the body of border %s", target, want)
			}
			if _, p := fetchStatus(t, check, h, pinned+strings.TrimPrefix(target, "/v1"), http.StatusOK); !bytes.Equal(p, got) {
				t.Errorf("GET %s pinned: not the current answer", target)
			}
		}
	}
	if found == 0 || below == 0 {
		t.Fatalf("%d levels with a border, %d below the lowest: the levels miss a case", found, below)
	}
	// Not digits, or more than the 32 openapi.yaml allows: the limits are the
	// spec's (handler/limits.go), checked before the handler's own reading.
	for _, bad := range []string{"-1", "abc", "1.5", "", "1e3", "%2B1", strings.Repeat("1", 33), strings.Repeat("9", 40)} {
		for _, prefix := range []string{"/v1", pinned} {
			_, b := fetchStatus(t, check, h, prefix+"/levelborders?level="+bad, http.StatusBadRequest)
			if !bytes.Contains(b, []byte("e.g. level=57")) || len(bad) > 32 && !bytes.Contains(b, []byte("at most 32")) {
				t.Errorf("level=%s: %s, want the accepted form named", bad, b)
			}
		}
	}
}

// event is one item of /v1/events: its bytes and its times.
type event struct {
	raw        json.RawMessage
	start, end time.Time
}

func readEvents(t *testing.T, body []byte) []event {
	t.Helper()
	var out []event
	for _, raw := range listData(t, body) {
		var e struct{ StartTime, EndTime time.Time }
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, event{raw, e.StartTime, e.EndTime})
	}
	return out
}

// activeAt is the contract's rule applied by hand: the events with start ≤ at < end.
func activeAt(events []event, at time.Time) []json.RawMessage {
	out := []json.RawMessage{}
	for _, e := range events {
		if !at.Before(e.start) && at.Before(e.end) {
			out = append(out, e.raw)
		}
	}
	return out
}

func sameItems(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// eventInstants are every start and end of events, each ±1 s, and a few
// others (long before, long after, one with a zone offset).
func eventInstants(events []event) []time.Time {
	out := []time.Time{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2021, 12, 1, 1, 0, 0, 0, time.FixedZone("", 3600))}
	for _, e := range events {
		for _, b := range []time.Time{e.start, e.end} {
			out = append(out, b.Add(-time.Second), b, b.Add(time.Second))
		}
	}
	return out
}

// TestEventsAt: /v1/events?at= lists exactly the events the contract's rule
// finds active then, in list order and bytes, at every start and end ±1 s and
// other instants, in en-US and ja-JP, cached as the list, the same under the
// pinned prefix; a malformed at, active=false, or both given is 400.
func TestEventsAt(t *testing.T) {
	t.Parallel()
	st := served(t)
	check := apitest.New(t)
	h := testRouter(t, st, nil)
	pinned := "/v1/versions/" + st.Active().ManifestID
	for _, lang := range []string{"en-US", "ja-JP"} {
		list, body := fetchStatus(t, check, h, "/v1/events?language="+lang, http.StatusOK)
		events := readEvents(t, body)
		if len(events) < 2 {
			t.Fatalf("%d events in the sample, want several", len(events))
		}
		nonEmpty := 0
		for _, at := range eventInstants(events) {
			q := "?language=" + lang + "&at=" + url.QueryEscape(at.Format(time.RFC3339))
			res, got := fetchStatus(t, check, h, "/v1/events"+q, http.StatusOK)
			want := activeAt(events, at)
			if items := listData(t, got); !sameItems(items, want) {
				t.Errorf("at %s (%s): %d events, want %d", at, lang, len(items), len(want))
			}
			nonEmpty += min(1, len(want))
			if res.Header.Get("Cache-Control") != list.Header.Get("Cache-Control") {
				t.Errorf("at %s: Cache-Control %q, want the list's %q", at, res.Header.Get("Cache-Control"), list.Header.Get("Cache-Control"))
			}
			if _, p := fetchStatus(t, check, h, pinned+"/events"+q, http.StatusOK); !bytes.Equal(p, got) {
				t.Errorf("at %s pinned: not the current answer", at)
			}
		}
		if nonEmpty == 0 {
			t.Fatal("no instant with an active event: the instants miss the case")
		}
	}
	// RFC 3339's offsets are ±00:00 to ±23:59 (time.Parse takes up to ±24:60);
	// 65 characters are past the spec's 64.
	long := "2021-12-01T00:00:00." + strings.Repeat("0", 44) + "Z"
	if _, err := time.Parse(time.RFC3339, long); err != nil || len(long) != 65 {
		t.Fatalf("%q: %v, %d characters; want a date-time of 65", long, err, len(long))
	}
	for _, good := range []string{"2021-12-01T00:00:00%2B23:59", "2021-12-01T00:00:00-23:59", "2021-12-01T00:00:00.5Z"} {
		fetchStatus(t, check, h, "/v1/events?at="+good, http.StatusOK)
	}
	for _, bad := range []string{"at=2021-12-01", "at=yesterday", "at=", "active=false", "active=yes", "active=true&at=2021-12-01T00:00:00Z",
		"at=2021-12-01T00:00:00%2B24:00", "at=2021-12-01T00:00:00-24:00", "at=2021-12-01T00:00:00%2B23:60", "at=" + long} {
		_, b := fetchStatus(t, check, h, "/v1/events?"+bad, http.StatusBadRequest)
		if (!bytes.Contains(b, []byte("active=true")) || !bytes.Contains(b, []byte("RFC 3339"))) && !bytes.Contains(b, []byte("at most 64")) {
			t.Errorf("%s: %s, want the accepted forms named", bad, b)
		}
	}
}

// TestEventsActive: /v1/events?active=true is ?at= at the server's clock
// (handler.Server.Now), its max-age ends at the next start or end (or is the
// catalog's when sooner or when none follows), never immutable, also pinned;
// through the edge an answer is not replayed once the clock passes a boundary.
func TestEventsActive(t *testing.T) {
	t.Parallel()
	st := served(t)
	ed := st.Active()
	const fresh = time.Hour
	for _, via := range []string{"router", "edge"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			var now atomic.Int64
			srv := &handler.Server{Repo: st, Fresh: fresh, Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }}
			reg := prometheus.NewRegistry()
			h, err := router.New(srv, slog.New(slog.NewTextHandler(io.Discard, nil)), router.NewHTTPMetrics(reg))
			if err != nil {
				t.Fatal(err)
			}
			if via == "edge" {
				h = throughEdge(t, h, st)
			}
			check := apitest.New(t)
			_, body := fetchStatus(t, check, h, "/v1/events", http.StatusOK)
			events := readEvents(t, body)
			var bounds []time.Time
			for _, e := range events {
				bounds = append(bounds, e.start, e.end)
			}
			for _, at := range eventInstants(events) {
				now.Store(at.UnixNano())
				for _, prefix := range []string{"/v1", "/v1/versions/" + ed.ManifestID} {
					target := prefix + "/events?active=true"
					res, got := fetchStatus(t, check, h, target, http.StatusOK)
					if items := listData(t, got); !sameItems(items, activeAt(events, at)) {
						t.Errorf("%s at %s: %d events, want %d", target, at, len(items), len(activeAt(events, at)))
					}
					limit := fresh
					if prefix != "/v1" {
						limit = 365 * 24 * time.Hour
					}
					for _, b := range bounds {
						if b.After(at) {
							limit = min(limit, b.Sub(at))
						}
					}
					if want := fmt.Sprintf("public, max-age=%d", int(limit.Seconds())); res.Header.Get("Cache-Control") != want {
						t.Errorf("%s at %s: Cache-Control %q, want %q", target, at, res.Header.Get("Cache-Control"), want)
					}
				}
			}
		})
	}
}

// TestEdgeMemoKeepsNoClockAnswer: the edge's memo never keeps a target whose
// answer changes with the clock.
func TestEdgeMemoKeepsNoClockAnswer(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"/v1/events?active=true", "/v1/events?language=de-DE&active=true", "/v1/events?active=true&language=de-DE"} {
		if router.EdgeMayAnswer(http.MethodGet, target) {
			t.Errorf("the edge may answer %s from its memo", target)
		}
	}
}

// TestSeasonTiers: /v1/seasons/competitive/{uuid}/tiers is, for every
// competitive season, the tier set its competitiveTiersUuid names, byte for
// byte, also pinned and in another language; 404 for a season not in the
// version, 400 for a malformed UUID.
func TestSeasonTiers(t *testing.T) {
	t.Parallel()
	st := served(t)
	check := apitest.New(t)
	h := testRouter(t, st, nil)
	_, body := fetchStatus(t, check, h, "/v1/seasons/competitive", http.StatusOK)
	seasons := listData(t, body)
	if len(seasons) == 0 {
		t.Fatal("no competitive season in the sample")
	}
	pinned := "/v1/versions/" + st.Active().ManifestID
	for _, raw := range seasons {
		var s struct{ UUID, CompetitiveTiersUuid string }
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", "?language=fr-FR"} {
			_, want := fetchStatus(t, check, h, "/v1/competitivetiers/"+s.CompetitiveTiersUuid+q, http.StatusOK)
			for _, prefix := range []string{"/v1", pinned} {
				if _, got := fetchStatus(t, check, h, prefix+"/seasons/competitive/"+s.UUID+"/tiers"+q, http.StatusOK); !bytes.Equal(got, want) {
					t.Errorf("season %s%s at %s: not tier set %s", s.UUID, q, prefix, s.CompetitiveTiersUuid)
				}
			}
		}
	}
	fetchStatus(t, check, h, "/v1/seasons/competitive/00000000-0000-0000-0000-000000000000/tiers", http.StatusNotFound)
	fetchStatus(t, check, h, "/v1/seasons/competitive/not-a-uuid/tiers", http.StatusBadRequest)
}

// TestRulesTiesAndGaps: on a sample changed where the rules' corner cases
// live, two borders starting at the same level answer the first listed, and a
// season naming a tier set the version lacks is a 404 that says so.
func TestRulesTiesAndGaps(t *testing.T) {
	t.Parallel()
	r, err := fixtures.Newest()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(c catalog.Category, i int, old, repl string) catalog.UUID {
		t.Helper()
		u := r.Tables[c].Order[i]
		d := r.Tables[c].Items[u][catalog.DefaultLocale]
		if !bytes.Contains(d.JSON, []byte(old)) {
			t.Fatalf("%s %s has no %s", c.Noun(), u, old)
		}
		d.JSON = bytes.Replace(d.JSON, []byte(old), []byte(repl), 1)
		return u
	}
	first := r.Tables[catalog.LevelBorders].Order[0]
	edit(catalog.LevelBorders, 0, `"startingLevel":1,`, `"startingLevel":20,`) // ties the second
	var s struct {
		Data struct{ CompetitiveTiersUuid string }
	}
	season := r.Tables[catalog.CompetitiveSeasons].Order[0]
	if err := json.Unmarshal(r.Tables[catalog.CompetitiveSeasons].Items[season][catalog.DefaultLocale].JSON, &s); err != nil {
		t.Fatal(err)
	}
	edit(catalog.CompetitiveSeasons, 0, s.Data.CompetitiveTiersUuid, "00000000-0000-0000-0000-000000000001")
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(edition.New(r)), nil)
	for _, level := range []string{"20", "39"} {
		_, got := fetchStatus(t, check, h, "/v1/levelborders?level="+level, http.StatusOK)
		if !bytes.Contains(got, []byte(first.String())) {
			t.Errorf("level %s: %s, want the first border listed at 20 (%s)", level, got, first)
		}
	}
	fetchStatus(t, check, h, "/v1/levelborders?level=19", http.StatusNotFound)
	_, b := fetchStatus(t, check, h, "/v1/seasons/competitive/"+season.String()+"/tiers", http.StatusNotFound)
	if !bytes.Contains(b, []byte("names no tier set")) {
		t.Errorf("a season whose tier set is missing: %s, want it said", b)
	}
}
