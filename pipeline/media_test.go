package pipeline

import "testing"

// TestRewriteURLs: the JSON strings a mirror holds point to it; others, escaped
// strings and text that merely contains a URL stay as they are.
func TestRewriteURLs(t *testing.T) {
	t.Parallel()
	to := func(u string) (string, bool) {
		if u == "https://m.example/a.png" || u == "http://m.example/b.png" {
			return "https://mirror.example/media/" + u[len(u)-5:], true
		}
		return "", false
	}
	for _, tc := range []struct{ in, want string }{
		{`{"icon":"https://m.example/a.png"}`, `{"icon":"https://mirror.example/media/a.png"}`},
		{`["https://m.example/a.png","http://m.example/b.png","https://m.example/c.png"]`,
			`["https://mirror.example/media/a.png","https://mirror.example/media/b.png","https://m.example/c.png"]`},
		{`{"text":"see https://m.example/a.png","x":"https:\/\/m.example\/a.png"}`, `{"text":"see https://m.example/a.png","x":"https:\/\/m.example\/a.png"}`},
		{`{"httpish":"http"}`, `{"httpish":"http"}`},
		{`{"cut":"https://m.example/a.png`, `{"cut":"https://m.example/a.png`},
	} {
		got, n := rewriteURLs([]byte(tc.in), to)
		if string(got) != tc.want {
			t.Errorf("rewrite %s = %s (%d), want %s", tc.in, got, n, tc.want)
		}
	}
}
