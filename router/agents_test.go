package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router/apitest"
)

// nonPlayableSova is the one agent record of the sample the game keeps for a
// non-playable character (a duplicate Sova without a role).
const nonPlayableSova = "ded3520f-4264-bfed-162d-b080e2abccf9"

// agentList is a /v1/agents body: each item's bytes, and its uuid and
// isPlayableCharacter.
type agentList struct {
	raw   []json.RawMessage
	uuids []string
	play  []bool
}

func readAgents(t *testing.T, target string, body []byte) agentList {
	t.Helper()
	var env struct{ Data []json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	l := agentList{raw: env.Data}
	for _, raw := range env.Data {
		var a struct {
			UUID                string          `json:"uuid"`
			IsPlayableCharacter *bool           `json:"isPlayableCharacter"`
			DisplayName         json.RawMessage `json:"displayName"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		if a.IsPlayableCharacter == nil {
			t.Fatalf("GET %s: agent %s has no isPlayableCharacter", target, a.UUID)
		}
		l.uuids = append(l.uuids, a.UUID)
		l.play = append(l.play, *a.IsPlayableCharacter)
	}
	return l
}

// TestAgentsFilter: /v1/agents?isPlayableCharacter=true lists exactly the
// playable agents of the unfiltered list, =false exactly the others (the
// sample's non-playable Sova record), each item as the unfiltered list has it
// and in its order, so the two partition it; in any locale and for
// language=all, in any letter case of the value, with its own ETag that
// answers 304 — directly and through the edge. Any other value is a 400 that
// names the two allowed ones.
func TestAgentsFilter(t *testing.T) {
	t.Parallel()
	ed := sample(t)
	ptBR, _ := catalog.ParseLocale("pt-BR")
	viaBoth(t, func(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
		check := apitest.New(t)
		h := build(edition.Serve(ed), nil)
		fetch := func(t *testing.T, target string, header ...string) (*http.Response, []byte) {
			t.Helper()
			res := check.Do(t, h, get(target, header...))
			body, _ := io.ReadAll(res.Body)
			return res, body
		}
		for _, lang := range []string{"", "ja-JP", "pt-br", "all"} {
			t.Run("language="+lang, func(t *testing.T) {
				query := ""
				if lang != "" {
					query = "&language=" + lang
				}
				allRes, allBody := fetch(t, "/v1/agents?"+strings.TrimPrefix(query, "&"))
				if allRes.StatusCode != http.StatusOK {
					t.Fatalf("unfiltered: %d", allRes.StatusCode)
				}
				all := readAgents(t, "/v1/agents", allBody)
				if len(all.uuids) != len(ed.UUIDs(catalog.Agents)) || len(all.uuids) < 2 {
					t.Fatalf("unfiltered: %d agents, the edition has %d", len(all.uuids), len(ed.UUIDs(catalog.Agents)))
				}
				seen := map[string]bool{}
				lists := map[bool]agentList{}
				etags := map[string]bool{allRes.Header.Get("ETag"): true}
				etagOf := map[bool]string{}
				for _, tc := range []struct {
					value string
					want  bool
				}{
					{"true", true},
					{"false", false},
					{"TRUE", true}, // any letter case, as openapi.yaml says
					{"False", false},
				} {
					target := "/v1/agents?isPlayableCharacter=" + tc.value + query
					res, body := fetch(t, target)
					if res.StatusCode != http.StatusOK {
						t.Fatalf("GET %s: %d %.300s", target, res.StatusCode, body)
					}
					got := readAgents(t, target, body)
					// The unfiltered list's items with this value, as it has them, in its order.
					var want agentList
					for i, p := range all.play {
						if p == tc.want {
							want.raw = append(want.raw, all.raw[i])
							want.uuids = append(want.uuids, all.uuids[i])
						}
					}
					if !slices.Equal(got.uuids, want.uuids) {
						t.Errorf("GET %s: agents %v, want %v", target, got.uuids, want.uuids)
					}
					for i, raw := range got.raw {
						if got.play[i] != tc.want {
							t.Errorf("GET %s: %s has isPlayableCharacter %v", target, got.uuids[i], got.play[i])
						}
						if i < len(want.raw) && !bytes.Equal(raw, want.raw[i]) {
							t.Errorf("GET %s: %s differs from the unfiltered list's", target, got.uuids[i])
						}
					}
					if slices.Contains(got.uuids, nonPlayableSova) == tc.want {
						t.Errorf("GET %s: the non-playable Sova record listed %v", target, !tc.want)
					}
					if prev, ok := lists[tc.want]; ok {
						// Another letter case of the value: the same answer.
						if !slices.Equal(prev.uuids, got.uuids) || res.Header.Get("ETag") != etagOf[tc.want] {
							t.Errorf("GET %s: not the answer to the lower-case value", target)
						}
						continue
					}
					lists[tc.want] = got
					etagOf[tc.want] = res.Header.Get("ETag")
					for _, u := range got.uuids {
						seen[u] = true
					}
					// Content-Language: the locale asked for where an agent listed
					// has text in it (pt-BR: the playable agents' real 2023 text),
					// en-US where none has (ja-JP: no source; the non-playable
					// record has no pt-BR counterpart) — then the body is en-US's.
					wantLang := "en-US"
					switch loc, ok := catalog.ParseLocale(lang); {
					case lang == "all":
						wantLang = catalog.AllLanguages
					case ok && lang != "":
						_, enBody := fetch(t, "/v1/agents?isPlayableCharacter="+tc.value)
						if !bytes.Equal(enBody, body) {
							wantLang = catalog.Locales[loc]
						}
						if translated := !bytes.Equal(enBody, body); translated != (loc == ptBR && tc.want) {
							t.Errorf("GET %s: translated %v; want real text only for the playable agents in pt-BR", target, translated)
						}
					}
					if got := res.Header.Get("Content-Language"); got != wantLang {
						t.Errorf("GET %s: Content-Language %q, want %q", target, got, wantLang)
					}
					if res.Header.Get("X-Data-Version") != ed.ManifestID {
						t.Errorf("GET %s: X-Data-Version %q", target, res.Header.Get("X-Data-Version"))
					}
					// Its own ETag, which revalidates.
					etag := res.Header.Get("ETag")
					if etag == "" || etags[etag] {
						t.Errorf("GET %s: ETag %q, not one of its own", target, etag)
					}
					etags[etag] = true
					if res, _ := fetch(t, target, "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
						t.Errorf("GET %s with If-None-Match %s: %d, want 304", target, etag, res.StatusCode)
					}
					if res, _ := fetch(t, target, "If-None-Match", allRes.Header.Get("ETag")); res.StatusCode != http.StatusOK {
						t.Errorf("GET %s with the unfiltered list's ETag: %d, want 200", target, res.StatusCode)
					}
				}
				if len(lists[true].uuids) == 0 || len(lists[false].uuids) == 0 {
					t.Fatalf("playable %v, non-playable %v: want both", lists[true].uuids, lists[false].uuids)
				}
				if len(lists[true].uuids)+len(lists[false].uuids) != len(all.uuids) || len(seen) != len(all.uuids) {
					t.Errorf("%d playable and %d non-playable agents do not partition the %d listed", len(lists[true].uuids), len(lists[false].uuids), len(all.uuids))
				}
				if lang == "all" {
					// language=all: each text keyed by the 18 codes.
					var a struct {
						DisplayName map[string]string `json:"displayName"`
					}
					if err := json.Unmarshal(lists[true].raw[0], &a); err != nil || len(a.DisplayName) != catalog.NumLocales {
						t.Errorf("language=all: displayName %v (%v), want the %d locales", a.DisplayName, err, catalog.NumLocales)
					}
				}
			})
		}
		// Encodings of the filtered list answer as the others: the ETag of
		// what is sent, 304 on it.
		for _, enc := range []string{"gzip", "br"} {
			target := "/v1/agents?isPlayableCharacter=true"
			res, _ := fetch(t, target, "Accept-Encoding", enc)
			etag := res.Header.Get("ETag")
			if res.StatusCode != http.StatusOK || etag == "" {
				t.Fatalf("GET %s (Accept-Encoding %s): %d, ETag %q", target, enc, res.StatusCode, etag)
			}
			if res, _ := fetch(t, target, "Accept-Encoding", enc, "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
				t.Errorf("GET %s (Accept-Encoding %s) with If-None-Match: %d, want 304", target, enc, res.StatusCode)
			}
		}
		for _, target := range []string{
			"/v1/agents?isPlayableCharacter=yes",
			"/v1/agents?isPlayableCharacter=1",
			"/v1/agents?isPlayableCharacter=",
			"/v1/agents?isPlayableCharacter=true%20",
			"/v1/agents?isPlayableCharacter=truefalse",
			"/v1/agents?isPlayableCharacter=yes&language=ja-JP",
			"/v1/agents?isPlayableCharacter=yes&language=all",
		} {
			res, body := fetch(t, target)
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("GET %s: %d, want 400", target, res.StatusCode)
				continue
			}
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("GET %s: %v", target, err)
			}
			for _, says := range []string{"isPlayableCharacter", "true", "false"} {
				if !strings.Contains(e.Error, says) {
					t.Errorf("GET %s: message %q does not name %q", target, e.Error, says)
				}
			}
		}
		// With another parameter wrong: that one is named; given twice, the
		// filter is refused.
		for _, tc := range []struct {
			target string
			says   string
		}{
			{"/v1/agents?isPlayableCharacter=true&language=xx-XX", "xx-XX"},
			{"/v1/agents?isPlayableCharacter=true&isPlayableCharacter=false", "give it once"},
		} {
			res, body := fetch(t, tc.target)
			if res.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(tc.says)) {
				t.Errorf("GET %s: %d %s, want 400 saying %s", tc.target, res.StatusCode, body, tc.says)
			}
		}
	})
}
