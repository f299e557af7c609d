package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// TestSampleDiffs: the embedded sample serves the diff between its two
// versions in both orders, each generated at the newer version's
// publication; /v1/diff/latest is the one from the older to the newer.
func TestSampleDiffs(t *testing.T) {
	t.Parallel()
	st := served(t)
	older, newer := previous(t, st), st.Active().ManifestID
	published := *st.Versions().Versions[0].PublishedAt
	// Fixed for the sample: the newer version's build date, whenever and
	// however often the sample is loaded.
	built, err := time.Parse(time.RFC3339, st.Active().Version.BuildDate)
	if err != nil {
		t.Fatal(err)
	}
	if at, err := time.Parse(time.RFC3339, published); err != nil || !at.Equal(built) {
		t.Fatalf("the newer version is published at %s (%v), want its build date %s", published, err, built)
	}
	check := apitest.New(t)
	h := testRouter(t, st, nil)
	diff := func(target string) (gen.Diff, []byte) {
		t.Helper()
		res := check.Do(t, h, get(target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", target, res.StatusCode, body)
		}
		var d gen.DiffBody
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		if d.Data.GeneratedAt != published {
			t.Errorf("GET %s: generatedAt %s, want %s, when the newer version was published", target, d.Data.GeneratedAt, published)
		}
		return d.Data, body
	}
	forward, fb := diff("/v1/diff/" + older + "/" + newer)
	back, _ := diff("/v1/diff/" + newer + "/" + older)
	_, lb := diff("/v1/diff/latest")
	if !bytes.Equal(lb, fb) {
		t.Error("/v1/diff/latest is not the diff from the older version to the newer")
	}
	if forward.FromVersion != older || forward.ToVersion != newer || back.FromVersion != newer || back.ToVersion != older {
		t.Errorf("forward %s → %s, back %s → %s", forward.FromVersion, forward.ToVersion, back.FromVersion, back.ToVersion)
	}
	if forward.Summary.TotalAdded+forward.Summary.TotalChanged == 0 {
		t.Fatalf("the sample's diff is empty: %+v", forward.Summary)
	}
	if back.Summary.TotalAdded != forward.Summary.TotalRemoved || back.Summary.TotalRemoved != forward.Summary.TotalAdded || back.Summary.TotalChanged != forward.Summary.TotalChanged {
		t.Errorf("back %+v is not forward %+v reversed", back.Summary, forward.Summary)
	}
}

// TestSampleDiffsAreTheSameBytes: the sample's diffs are the same bytes, in
// every encoding and with the same ETags, every time the sample is loaded (a
// restart, another replica): nothing in them depends on when or how they were
// made (generatedAt is the newer version's publication, TestSampleDiffs), so
// an answer cached by a client or a CDN stays valid across restarts.
func TestSampleDiffsAreTheSameBytes(t *testing.T) {
	t.Parallel()
	// The sample as the protocol tests serve it, its bodies compressed, and
	// loaded again uncompressed: a diff's body is compressed on its own, the
	// same whatever the editions' effort. (Under the race detector the
	// protocol tests serve the trimmed sample: the full one is loaded twice.)
	a := served(t)
	if raceOn {
		var err error
		if a, err = fixtures.Static(representation.Effort{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := fixtures.Static(representation.Effort{})
	if err != nil {
		t.Fatal(err)
	}
	older, newer := previous(t, a), a.Active().ManifestID
	check := apitest.New(t)
	ha, hb := testRouter(t, a, nil), testRouter(t, b, nil)
	for _, target := range []string{"/v1/diff/latest", "/v1/diff/" + older + "/" + newer, "/v1/diff/" + newer + "/" + older} {
		for _, enc := range []string{"", "gzip", "br"} {
			ra := check.Do(t, ha, get(target, "Accept-Encoding", enc))
			rb := check.Do(t, hb, get(target, "Accept-Encoding", enc))
			ba, _ := io.ReadAll(ra.Body)
			bb, _ := io.ReadAll(rb.Body)
			if ra.StatusCode != http.StatusOK || rb.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d and %d", target, ra.StatusCode, rb.StatusCode)
			}
			if ra.Header.Get("Content-Encoding") != enc {
				t.Errorf("GET %s (Accept-Encoding %q): Content-Encoding %q", target, enc, ra.Header.Get("Content-Encoding"))
			}
			if len(ba) == 0 || !bytes.Equal(ba, bb) || ra.Header.Get("ETag") != rb.Header.Get("ETag") {
				t.Errorf("GET %s (Accept-Encoding %q): two loads of the sample answer %d and %d bytes, ETags %s and %s", target, enc, len(ba), len(bb), ra.Header.Get("ETag"), rb.Header.Get("ETag"))
			}
		}
	}
}
