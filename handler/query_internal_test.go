package handler

import (
	"errors"
	"strconv"
	"testing"

	"github.com/refdata/refdata/representation"
)

// TestQueryMemo: an answer is made once per key and then looked up; an
// error is not kept; without a key (a body with no address) nothing is;
// what is kept stays within its bytes, the used least recently leaving
// first, and an answer over a quarter of the bound is never kept.
func TestQueryMemo(t *testing.T) {
	t.Parallel()
	s := &Server{QueryMemoBytes: 8 << 10}
	qs := s.queryState()
	made := map[string]int{}
	answer := func(key string, size int, fail bool) *representation.Body {
		t.Helper()
		b, err := qs.answer(key, func() (*representation.Body, error) {
			made[key]++
			if fail {
				return nil, errors.New("broken")
			}
			return representation.NewBody(make([]byte, size), ""), nil
		})
		if (err != nil) != fail {
			t.Fatalf("answer %q: %v", key, err)
		}
		return b
	}
	first := answer("a", 1000, false)
	if again := answer("a", 1000, false); again != first || made["a"] != 1 {
		t.Errorf("a second ask made it again (%d times)", made["a"])
	}
	answer("e", 10, true)
	answer("e", 10, false)
	if made["e"] != 2 {
		t.Errorf("an error was kept: made %d times", made["e"])
	}
	answer("", 10, false)
	answer("", 10, false)
	if made[""] != 2 {
		t.Errorf("an answer without a key was kept")
	}
	answer("big", 3000, false)
	answer("big", 3000, false)
	if made["big"] != 2 {
		t.Errorf("an answer over a quarter of the bound was kept")
	}
	// Fill past the bound: "a", used least recently, leaves; the newest stay.
	for i := range 8 {
		answer(strconv.Itoa(i), 1000, false)
	}
	if qs.answers.c.Bytes() > 8<<10 {
		t.Errorf("%d bytes kept, over the bound", qs.answers.c.Bytes())
	}
	answer("7", 1000, false)
	answer("a", 1000, false)
	if made["7"] != 1 || made["a"] != 2 {
		t.Errorf("made 7 %d times, a %d times: want the newest kept, the oldest gone", made["7"], made["a"])
	}
}
