package handler

import (
	"fmt"
	"testing"

	"github.com/refdata/refdata/representation"
)

// TestLogoCacheBound: the kept answers stay within logoCacheBytes, the least
// recently served leave first, and an answer too big to keep is not kept.
func TestLogoCacheBound(t *testing.T) {
	t.Parallel()
	var c logoCache
	c.init(0)
	body := func(n int) *representation.Body { return representation.NewBody(make([]byte, n), "") }
	const size = logoCacheBytes/10 - 16 // ten fit with their tags
	for i := range 10 {
		c.put(fmt.Sprint(i), body(size))
	}
	if c.get("0") == nil {
		t.Fatal("an answer that fits is not kept")
	}
	c.put("10", body(size)) // past the bound: 1 was served least recently
	if c.get("1") != nil || c.get("0") == nil || c.get("10") == nil {
		t.Errorf("after one more: 1 kept %v, 0 kept %v, 10 kept %v; want only 1 gone", c.get("1") != nil, c.get("0") != nil, c.get("10") != nil)
	}
	if c.kept.Bytes() > logoCacheBytes || c.kept.Len() != 10 {
		t.Errorf("%d bytes kept (bound %d), %d answers (want 10)", c.kept.Bytes(), logoCacheBytes, c.kept.Len())
	}
	c.put("huge", body(logoCacheBytes/4))
	if c.get("huge") != nil {
		t.Error("an answer of a quarter of the bound is kept")
	}
}
