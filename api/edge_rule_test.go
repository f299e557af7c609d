package api_test

import (
	"testing"

	"github.com/refdata/refdata/api"
)

// TestEdgeMayAnswer: the edge answers from its memo only GETs and HEADs with a
// User-Agent the router takes, for targets whose query is empty or the language
// alone.
func TestEdgeMayAnswer(t *testing.T) {
	for _, tc := range []struct {
		method, target, ua string
		want               bool
	}{
		{"GET", "/v1/weapons", "bot/1", true},
		{"HEAD", "/v1/weapons", "bot/1", true},
		{"GET", "/v1/weapons?language=de-DE", "bot/1", true},
		{"GET", "/v1/weapons?language=all", "bot/1", true},
		{"GET", "/v1/weapons", "", false},
		{"GET", "/v1/weapons", " \t", false},
		{"OPTIONS", "/v1/weapons", "bot/1", false},
		{"POST", "/v1/weapons", "bot/1", false},
		{"GET", "/v1/weapons?x=1", "bot/1", false},
		{"GET", "/v1/weapons?language=de-DE&x=1", "bot/1", false},
		{"GET", "/v1/weapons?", "bot/1", false},
	} {
		if got := api.EdgeMayAnswer(tc.method, tc.target, tc.ua); got != tc.want {
			t.Errorf("%s %s (User-Agent %q): %v, want %v", tc.method, tc.target, tc.ua, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { api.EdgeMayAnswer("GET", "/v1/weapons?language=de-DE", "bot/1") }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
