package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// alertRules is deploy/prometheus/alerts.yaml as Prometheus reads it.
type alertRules struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Alert       string
			Expr        string
			For         string
			Labels      map[string]string
			Annotations map[string]string
		}
	}
}

// TestMonitoringFiles: the dashboard (deploy/grafana/refdata.json) and the
// alerts (deploy/prometheus/alerts.yaml) query only metrics a replica exports
// — every name is in a real scrape of serve --sync over a store whose sync
// state holds a failure and a media pass — every panel has a query and fits
// the grid, and every alert waits its `for`, has a severity and a runbook that
// docs/operations.md holds. promtool checks the rules' syntax and behaviour
// (make deploy-check).
func TestMonitoringFiles(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "deploy")
	raw, err := os.ReadFile(filepath.Join(root, "grafana", "refdata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		UID    string
		Panels []struct {
			ID      int
			Type    string
			Title   string
			GridPos struct{ H, W, X, Y int }
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("refdata.json: %v", err)
	}
	var tree any
	_ = json.Unmarshal(raw, &tree)
	queries := map[string]string{} // query → where
	collectQueries(tree, "refdata.json", queries)
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("refdata.json: panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if g := p.GridPos; g.W < 1 || g.X < 0 || g.X+g.W > 24 || g.H < 1 {
			t.Errorf("refdata.json: panel %q at %+v is off the 24-column grid", p.Title, g)
		}
		if p.Type != "row" && (len(p.Targets) == 0 || slices.ContainsFunc(p.Targets, func(q struct{ Expr string }) bool { return q.Expr == "" })) {
			t.Errorf("refdata.json: panel %q has no query", p.Title)
		}
	}
	if dash.UID == "" || len(dash.Panels) < 10 {
		t.Errorf("refdata.json: uid %q, %d panels", dash.UID, len(dash.Panels))
	}

	raw, err = os.ReadFile(filepath.Join(root, "prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	ops, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(ops))
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			queries[r.Expr] = "alert " + r.Alert
			if d, err := time.ParseDuration(r.For); err != nil || d < time.Minute {
				t.Errorf("alert %s: for %q, want a wait of a minute or more", r.Alert, r.For)
			}
			if !slices.Contains([]string{"warning", "critical"}, r.Labels["severity"]) || r.Annotations["summary"] == "" {
				t.Errorf("alert %s: want a severity (warning, critical) and a summary", r.Alert)
			}
			_, anchor, _ := strings.Cut(r.Annotations["runbook_url"], "docs/operations.md#")
			if !anchors[anchor] {
				t.Errorf("alert %s: runbook %q is not a heading of docs/operations.md", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	for _, want := range []string{"RefdataSyncFailing", "RefdataBehindUpstream", "RefdataReplicaNotReady", "RefdataReplicasDisagree", "RefdataHTTPErrors", "RefdataHTTPSlow", "RefdataMediaFailing"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("alerts.yaml has no %s", want)
		}
	}

	exported := scrapeNames(t)
	for q, where := range queries {
		for _, name := range metricName.FindAllString(q, -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && exported[b] == "histogram" {
					base = b
				}
			}
			if exported[base] == "" {
				t.Errorf("%s queries %s, which refdata does not export", where, name)
			}
		}
	}
}

// metricName finds refdata's metric names in a query (Prometheus's own, up,
// are not refdata's to export).
var metricName = regexp.MustCompile(`\brefdata_[a-z0-9_]+\b`)

// collectQueries gathers every query in a dashboard: panels' expr, the
// template variables' query and definition.
func collectQueries(v any, where string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			if s, ok := vv.(string); ok && (k == "expr" || k == "definition") {
				out[s] = where
			}
			if m, ok := vv.(map[string]any); ok && k == "query" {
				if s, ok := m["query"].(string); ok {
					out[s] = where
				}
			}
			collectQueries(vv, where, out)
		}
	case []any:
		for _, vv := range x {
			collectQueries(vv, where, out)
		}
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings.
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") && !fenced {
			a := strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return '-'
				case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z':
					return r
				}
				return -1
			}, strings.ToLower(h))
			out[a] = true
		}
	}
	return out
}

// scrapeNames serves a store as a replica that syncs (serve --sync), over a
// store whose sync state holds a failure and a media pass, and returns every
// metric name its /v1/metrics has, with its type.
func scrapeNames(t *testing.T) map[string]string {
	t.Helper()
	vs := standInVersions(t)
	up := upstreamtest.New(vs[0])
	hs := httptest.NewServer(up)
	defer hs.Close()
	data := t.TempDir()
	st, err := store.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	state, _ := json.Marshal(follow.State{Upstream: hs.URL, FailedAt: map[string]time.Time{follow.ReasonStatus: at},
		Media: &follow.MediaState{At: at, Files: map[string]int{"known": 3, "fetched": 1, follow.MediaStatus: 1, follow.MediaDeferred: 2}}})
	if err := st.WriteSyncState(state); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := start(t, ctx, "--addr", "127.0.0.1:0", "--log-level", "error", "--data", data,
		"--sync", hs.URL, "--sync-every", "1h", "--poll", "20ms", "--contact", "https://example.org/ops")
	defer func() { cancel(); <-done }()
	check := apitest.New(t)
	h := apitest.Forward(t, &http.Client{}, "http://"+addr)
	get := func(target string) *http.Response {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
		return check.Do(t, h, req)
	}
	var body string
	eventually(t, "serve --sync serves "+vs[0].Name, func() bool {
		if get("/v1/version").Header.Get("X-Data-Version") != vs[0].Name {
			return false
		}
		b, _ := io.ReadAll(get("/v1/metrics").Body)
		body = string(b)
		return strings.Contains(body, `refdata_sync_runs_total{outcome="published"} 1`)
	})
	names := map[string]string{}
	for _, l := range strings.Split(body, "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = f[3]
		}
	}
	return names
}
