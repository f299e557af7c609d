package edge

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// TestSpillCloses: a spill file stays open while a body placed in it is
// being sent, and closes when its memo is retired and the last body placed
// has been let go of, not before; nothing is placed once it is retired.
func TestSpillCloses(t *testing.T) {
	if !canSendfile {
		t.Skip("no spill file off Linux")
	}
	t.Parallel()
	type step struct {
		do   string // place (refused: placing fails), done, retire
		open bool   // the file after the step
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"idle when retired: closed at once", []step{{"place", true}, {"done", true}, {"retire", false}}},
		{"sending when retired: closed when sent", []step{{"place", true}, {"retire", true}, {"done", false}}},
		{"two sending", []step{{"place", true}, {"place", true}, {"retire", true}, {"done", true}, {"done", false}}},
		{"nothing placed once retired", []step{{"place", true}, {"done", true}, {"retire", false}, {"refused", false}}},
		{"retired before any body: no file made", []step{{"retire", false}, {"refused", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sp spill
			var file *os.File // the spill's file, once made
			for i, st := range tt.steps {
				switch st.do {
				case "place", "refused":
					enc := &representation.NewBody(fmt.Appendf(nil, `{"body":%d}`, i), "").Encoded
					f, _, ok := sp.place(enc)
					if ok != (st.do == "place") {
						t.Fatalf("step %d: place = %v", i, ok)
					}
					if ok {
						file = f
					}
				case "done":
					sp.done()
				case "retire":
					sp.retire()
				}
				_, err := file.Stat() // a nil *os.File is os.ErrInvalid
				open := err == nil
				if open != st.open || !open && file != nil && !errors.Is(err, os.ErrClosed) {
					t.Fatalf("step %d (%s): file open = %v (%v), want %v", i, st.do, open, err, st.open)
				}
			}
		})
	}
}

// TestSpillClosedWhenRetired: the memo's spill file is closed as soon as its
// memo is retired, by ActiveChanged or by an answer from the edition served
// next, when the bodies sent from it (GET) and set but not sent (HEAD) have
// all been let go of as their answers ended.
func TestSpillClosedWhenRetired(t *testing.T) {
	if !canSendfile {
		t.Skip("no spill file off Linux")
	}
	t.Parallel()
	s := loadSample(t)
	const min = 2 << 10
	const target = "/v1/weapons"
	if n := s.newest.List(catalog.Weapons, catalog.DefaultLocale).Len(); n < min {
		t.Fatalf("the weapons are %d bytes, under the %d sent from the spill file", n, min)
	}
	for _, how := range []string{"ActiveChanged", "an answer from the next edition"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			repo := &swappable{}
			repo.ed.Store(s.newest)
			h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active, SendfileMin: min})
			for _, req := range []*http.Request{
				request("GET", target), // routed, memoized
				request("GET", target), // from the memo, by sendfile from the spill file
				request("HEAD", target),
				request("GET", target, "Accept-Encoding", "gzip"),
				request("GET", target),
			} {
				if res := h.do(t, req); res.status != http.StatusOK {
					t.Fatalf("%s %s: %d", req.Method, target, res.status)
				}
			}
			h.settle(t) // every answer has ended: its body let go of
			m := h.es.memo.Load()
			m.spill.mu.Lock()
			f, sending := m.spill.f, m.spill.sending
			m.spill.mu.Unlock()
			if f == nil || sending != 0 {
				t.Fatalf("spill file %v, %d bodies still being sent; want a file and none", f, sending)
			}
			if _, err := f.Stat(); err != nil {
				t.Fatalf("the memo's spill file, while its memo is served: %v", err)
			}
			repo.ed.Store(s.older)
			if how == "ActiveChanged" {
				h.es.ActiveChanged()
			} else if res := h.do(t, request("GET", target)); res.status != http.StatusOK || h.es.memo.Load() == m {
				t.Fatalf("the next edition's answer: %d, the memo replaced: %v", res.status, h.es.memo.Load() != m)
			}
			if _, err := f.Stat(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("the retired memo's spill file: %v, want it closed", err)
			}
		})
	}
}
