package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// TestMetrics: /v1/metrics is clean under promlint; request durations are
// labelled by route template and status, never by the raw path (a uuid, an
// unknown path); the rendered bytes are the active edition's, by encoding.
func TestMetrics(t *testing.T) {
	t.Parallel()
	st := served(t)
	ed := st.Active()
	reg := prometheus.NewRegistry()
	router.RegisterEditionMetrics(reg, st.Active)
	srv := &handler.Server{Repo: st, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	router.RegisterHeldMetric(reg, srv.Held)
	h, err := router.New(srv, slog.New(slog.DiscardHandler), router.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/v1/versions/" + strings.ToLower(previous(t, st)) + "/weapons/skins?language=ja-JP", 200},
		{"/v1/versions/0000000000000000/weapons/skins", 404},
		{"/v1/weapons/skins/" + skin, 200},
		{"/v1/weapons/skins/" + skin + "?language=ja-JP", 200},
		{"/v1/weapons/skins/00000000-0000-0000-0000-000000000000", 404},
		{"/v1/nothing/here", 404},
		{"/v1/version?wait=1ms", 304},     // held: a series of its own
		{"/v1/weapons/skins?q=odin", 200}, // queries: series of their own
		{"/v1/weapons/skins/" + skin + "?fields=uuid", 200},
		{"/browse/weapons-skins?q=odin", 200}, // a page's search too
	} {
		if res := check.Do(t, h, get(tc.target, "If-None-Match", ed.VersionBody().ETag())); res.StatusCode != tc.status {
			t.Fatalf("GET %s: %d, want %d", tc.target, res.StatusCode, tc.status)
		}
	}
	res := check.Do(t, h, get("/v1/metrics"))
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/v1/metrics: %d", res.StatusCode)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]bool{} // route code
	rendered := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "refdata_http_request_duration_seconds":
				series[labels["route"]+" "+labels["code"]] = true
				if strings.Contains(labels["route"], skin) || strings.Contains(labels["route"], "nothing") || strings.Contains(labels["route"], "0000") || strings.Contains(strings.ToUpper(labels["route"]), previous(t, st)) {
					t.Errorf("a series labelled by the raw path: %v", labels)
				}
			case "refdata_rendered_bytes":
				rendered[labels["encoding"]] = m.GetGauge().GetValue()
			}
		}
	}
	for _, want := range []string{"/v1/weapons/skins/{uuid} 200", "/v1/weapons/skins/{uuid} 404", "unmatched 404", "/v1/version?wait 304", "/v1/weapons/skins?q 200", "/v1/weapons/skins/{uuid}?fields 200", "/browse/{catalog}?q 200"} {
		if !series[want] {
			t.Errorf("no request series %q; have %v", want, series)
		}
	}
	// A pinned route's series is its template's, whatever version it names.
	for _, want := range []string{"/v1/versions/{manifestId}/weapons/skins 200", "/v1/versions/{manifestId}/weapons/skins 404"} {
		if !series[want] {
			t.Errorf("no request series %q; have %v", want, series)
		}
	}
	identity, gz, br := ed.Sizes()
	for enc, want := range map[string]int{"identity": identity, "gzip": gz, "br": br} {
		if want == 0 || rendered[enc] != float64(want) {
			t.Errorf("refdata_rendered_bytes{encoding=%q} = %v, want %d", enc, rendered[enc], want)
		}
	}
}

// withUnknownFields is the trimmed newest sample with fields openapi.yaml
// does not describe added as an upstream adds them: background on the first
// two maps, callouts[].elevation on one callout of the first map with
// callouts, and rarity on every theme. It is rendered as an import renders it
// (the unknown fields Validate found on the edition) and returns the edition
// and the items per catalog and field that carry one.
func withUnknownFields(t *testing.T) (*edition.Edition, map[string]float64) {
	t.Helper()
	files, err := fixtures.Files(fixtures.Versions()[1], true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	catalog.Repair(s)
	want := map[string]float64{}
	maps := s.Sources[catalog.Maps]
	if len(maps) < 3 {
		t.Fatalf("%d maps in the trimmed sample, want 3 or more", len(maps))
	}
	for _, it := range maps[:2] {
		it.(map[string]any)["background"] = "dusk"
		want["maps background"]++
	}
	for _, it := range maps {
		if c, _ := it.(map[string]any)["callouts"].([]any); len(c) > 1 {
			c[1].(map[string]any)["elevation"] = 3.0
			want["maps callouts[].elevation"]++
			break
		}
	}
	for _, it := range s.Sources[catalog.Themes] {
		it.(map[string]any)["rarity"] = map[string]any{"tier": "rare"}
		want["themes rarity"]++
	}
	if want["maps callouts[].elevation"] != 1 || want["themes rarity"] == 0 {
		t.Fatalf("the trimmed sample has no map with callouts or no theme: %v", want)
	}
	val, err := catalog.Validate(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(val.Rejections) > 0 {
		t.Fatalf("the snapshot is refused: %v", val.Rejections)
	}
	r, err := catalog.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	r.Unknown = val.Unknown
	return edition.New(r), want
}

// unknownSeries reads the refdata_unknown_fields series of a scrape in the
// text format: "catalog field" → value.
func unknownSeries(t *testing.T, scrape []byte) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(string(scrape), "\n") {
		rest, ok := strings.CutPrefix(line, "refdata_unknown_fields{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			t.Fatalf("series %q", line)
		}
		got := map[string]string{}
		for _, l := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(l, "=")
			uq, err := strconv.Unquote(v)
			if err != nil {
				t.Fatalf("series %q: label %s: %v", line, l, err)
			}
			got[k] = uq
		}
		if len(got) != 2 || got["category"] == "" || got["field"] == "" {
			t.Errorf("series %q: want the labels category and field", line)
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("series %q: %v", line, err)
		}
		out[got["category"]+" "+got["field"]] = f
	}
	return out
}

// TestUnknownFieldsMetric: refdata_unknown_fields has one series per catalog
// and field the active version carries that openapi.yaml does not describe,
// labelled category and field, its value the items carrying it; it is read at
// each scrape, so it follows a swap to a version without any (no series then:
// nothing to report) and back. The bodies serve the fields as sent.
func TestUnknownFieldsMetric(t *testing.T) {
	t.Parallel()
	withNew, want := withUnknownFields(t)
	small, err := fixtures.Small("15")
	if err != nil {
		t.Fatal(err)
	}
	plain := edition.New(small)
	if len(plain.Unknown) != 0 {
		t.Fatalf("the trimmed sample carries unknown fields: %v", plain.Unknown)
	}
	st := &edition.Static{}
	reg := prometheus.NewRegistry()
	router.RegisterEditionMetrics(reg, st.Active)
	srv := &handler.Server{Repo: st, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	router.RegisterHeldMetric(reg, srv.Held)
	h, err := router.New(srv, slog.New(slog.DiscardHandler), router.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	scrape := func() []byte {
		t.Helper()
		res := check.Do(t, h, get("/v1/metrics"))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/v1/metrics: %d", res.StatusCode)
		}
		return body
	}
	for i, tc := range []struct {
		name string
		ed   *edition.Edition
		want map[string]float64
	}{
		{"unknown fields", withNew, want},
		{"swapped to none", plain, map[string]float64{}},
		{"swapped back", withNew, want},
	} {
		if err := st.Set(true, edition.StaticVersion{Edition: tc.ed}); err != nil {
			t.Fatal(err)
		}
		body := scrape()
		if got := unknownSeries(t, body); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: refdata_unknown_fields %v, want %v", tc.name, got, tc.want)
		}
		if has := bytes.Contains(body, []byte("# TYPE refdata_unknown_fields gauge")); has != (len(tc.want) > 0) {
			t.Errorf("%s: the scrape describes refdata_unknown_fields: %v", tc.name, has)
		}
		if i > 0 {
			continue
		}
		problems, err := promlint.New(bytes.NewReader(body)).Lint()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	// Served as the upstream sent them.
	m := withNew.UUIDs(catalog.Maps)[0]
	res := check.Do(t, h, get("/v1/maps/"+m.String()))
	var item struct{ Data map[string]any }
	if err := json.NewDecoder(res.Body).Decode(&item); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/v1/maps/%s: %d %v", m, res.StatusCode, err)
	}
	if item.Data["background"] != "dusk" {
		t.Errorf("/v1/maps/%s: background %v, want the upstream's dusk", m, item.Data["background"])
	}
}
