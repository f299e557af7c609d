package api_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/representation"
)

// TestMetrics: /v1/metrics is clean under promlint; request durations are
// labelled by route template and status, never by the raw path (a uuid, an
// unknown path); the rendered bytes are the active edition's, by encoding.
func TestMetrics(t *testing.T) {
	t.Parallel()
	st := served(t)
	ed := st.Active()
	reg := prometheus.NewRegistry()
	api.RegisterEditionMetrics(reg, st.Active)
	h, err := api.New(&impl.Server{Repo: st, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}, slog.New(slog.DiscardHandler), api.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/v1/weapons/skins/" + skin, 200},
		{"/v1/weapons/skins/" + skin + "?language=ja-JP", 200},
		{"/v1/weapons/skins/00000000-0000-0000-0000-000000000000", 404},
		{"/v1/nothing/here", 404},
	} {
		if res := check.Do(t, h, get(tc.target)); res.StatusCode != tc.status {
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
				if strings.Contains(labels["route"], skin) || strings.Contains(labels["route"], "nothing") || strings.Contains(labels["route"], "0000") {
					t.Errorf("a series labelled by the raw path: %v", labels)
				}
			case "refdata_rendered_bytes":
				rendered[labels["encoding"]] = m.GetGauge().GetValue()
			}
		}
	}
	for _, want := range []string{"/v1/weapons/skins/{uuid} 200", "/v1/weapons/skins/{uuid} 404", "unmatched 404"} {
		if !series[want] {
			t.Errorf("no request series %q; have %v", want, series)
		}
	}
	identity, gz, br := representation.Sizes(ed.Bodies())
	for enc, want := range map[string]int{"identity": identity, "gzip": gz, "br": br} {
		if want == 0 || rendered[enc] != float64(want) {
			t.Errorf("refdata_rendered_bytes{encoding=%q} = %v, want %d", enc, rendered[enc], want)
		}
	}
}
