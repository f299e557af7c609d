package pipeline

import (
	"bytes"
)

// mediaRewriter points catalog bodies' media URLs at a mirror
// (Options.MediaURL): every JSON string of a body that is an http(s) URL for
// which to gives another is replaced by it, counted in n. Nil without to.
func mediaRewriter(to func(string) (string, bool), n *int) func([]byte) []byte {
	if to == nil {
		return nil
	}
	return func(b []byte) []byte {
		out, k := rewriteURLs(b, to)
		*n += k
		return out
	}
}

// rewriteURLs replaces the JSON strings of b that begin "http(s):// and hold
// no escape with to's answer, when it has one.
func rewriteURLs(b []byte, to func(string) (string, bool)) ([]byte, int) {
	var out []byte
	n, last := 0, 0
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], []byte(`"http`))
		if j < 0 {
			break
		}
		start := i + j + 1
		end := bytes.IndexByte(b[start:], '"')
		if end < 0 {
			break
		}
		end += start
		s := string(b[start:end])
		i = end + 1
		if bytes.IndexByte(b[start:end], '\\') >= 0 || !(len(s) > 7 && s[:7] == "http://" || len(s) > 8 && s[:8] == "https://") {
			continue
		}
		if u, ok := to(s); ok {
			out = append(append(out, b[last:start]...), u...)
			last, n = end, n+1
		}
	}
	if n == 0 {
		return b, 0
	}
	return append(out, b[last:]...), n
}
