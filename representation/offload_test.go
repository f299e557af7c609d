package representation

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain doubles as the compression child the offload tests start.
func TestMain(m *testing.M) {
	ServeIfChild()
	os.Exit(m.Run())
}

// offloadBodies are bodies of every kind Compress treats apart: too small to
// compress, incompressible, item-sized, list-sized, and one past brotli's
// largest window.
func offloadBodies() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	item := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"status":200,"data":[`)
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, `{"uuid":"%08x-0000","displayName":"Glitchpop Odin %d","cost":%d},`, rng.Uint32(), i, rng.IntN(5000))
		}
		b.WriteString(`{}]}`)
		return []byte(b.String())
	}
	return [][]byte{[]byte(`{"status":200,"data":{}}`), noise, item(300), item(4 << 10), item(30 << 10),
		item(300 << 10), item(5 << 20)}
}

// requestsComeIn makes each see requests coming in until the test ends, so
// the in-process workers leave the work to the child (after OffloadPatience
// for CompressGzipAll).
func requestsComeIn(t *testing.T) {
	prev := serving
	serving = func() bool { return true }
	t.Cleanup(func() { serving = prev })
}

func offloadOn(t *testing.T) {
	Offload(nil)
	t.Cleanup(StopOffload)
}

// TestOffloadMatchesInProcess: bodies compressed in the child carry the bytes,
// and so the ETags, that compressing in the server makes, at either Effort
// and in both steps of a swap (gzip, then brotli beside serving).
func TestOffloadMatchesInProcess(t *testing.T) {
	efforts := []Effort{Fast, Best}
	if testing.Short() {
		efforts = efforts[:1] // Best's brotli of 5 MB takes most of a minute under -race
	}
	for _, e := range efforts {
		t.Run(fmt.Sprintf("gzip%d-brotli%d", e.Gzip, e.Brotli), func(t *testing.T) {
			defer UseEffort(e)()
			requestsComeIn(t)
			offloadOn(t)
			var want, got []*Body
			for _, b := range offloadBodies() {
				w := NewBody(b, "")
				w.Compress()
				want = append(want, w)
				got = append(got, NewBody(b, ""))
			}
			CompressGzipAll(got)
			for i, b := range got {
				if b.Pick([]string{"br"}).Encoding.Value != nil && b.Pick([]string{"br"}).Encoding.Value[0] == "br" {
					t.Errorf("body %d: brotli after CompressGzipAll", i)
				}
				if g, w := b.Pick([]string{"gzip"}).ETag(), want[i].Pick([]string{"gzip"}).ETag(); g != w {
					t.Errorf("body %d (%d bytes): gzip ETag %s, in-process %s", i, len(b.JSON), g, w)
				}
			}
			CompressAll(got)
			for i := range got {
				g, w := got[i].Representations(), want[i].Representations()
				if len(g) != len(w) {
					t.Fatalf("body %d (%d bytes): %d representations, in-process %d", i, len(got[i].JSON), len(g), len(w))
				}
				for k := range g {
					if !bytes.Equal(g[k].Bytes, w[k].Bytes) || g[k].ETag() != w[k].ETag() || g[k].Encoding != w[k].Encoding {
						t.Errorf("body %d (%d bytes), representation %d: differs from in-process", i, len(got[i].JSON), k)
					}
				}
			}
			if n := off.c.answered.Load(); n == 0 {
				t.Error("the child compressed nothing: the test compared in-process with in-process")
			}
		})
	}
}

// TestOffloadSurvivesTheChild: when the child dies with work in flight, what
// it had not answered is compressed in-process, and the next loop starts a
// new child.
func TestOffloadSurvivesTheChild(t *testing.T) {
	defer UseEffort(Fast)()
	requestsComeIn(t)
	offloadOn(t)
	var bodies []*Body
	kinds := offloadBodies()[2:6] // up to 300 KB: quick under -race
	for range 20 {
		for _, b := range kinds {
			bodies = append(bodies, NewBody(b, ""))
		}
	}
	c := offloader()
	if c == nil {
		t.Fatal("no child")
	}
	doneWith()
	go func() {
		for c.answered.Load() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		_ = c.cmd.Process.Kill()
	}()
	CompressAll(bodies)
	for i, b := range bodies {
		if len(b.Representations()) != 3 {
			t.Fatalf("body %d not compressed after the child died", i)
		}
	}
	if !c.failed() {
		t.Fatal("the child was not killed before the loop ended; the test proves nothing")
	}
	next := offloader()
	if next == nil || next == c {
		t.Errorf("no new child after the first died")
	}
	doneWith()
}

// TestChildRetiresWhenIdle: the child exits childIdle after the last loop
// that used it, and the next loop starts another.
func TestChildRetiresWhenIdle(t *testing.T) {
	defer UseEffort(Fast)()
	defer func(d time.Duration) { childIdle = d }(childIdle)
	childIdle = 50 * time.Millisecond
	requestsComeIn(t)
	offloadOn(t)
	compress := func() *child {
		b := NewBody(offloadBodies()[4], "")
		CompressAll([]*Body{b})
		if len(b.Representations()) != 3 {
			t.Fatal("not compressed")
		}
		off.mu.Lock()
		defer off.mu.Unlock()
		return off.c
	}
	first := compress()
	if first == nil || first.answered.Load() == 0 {
		t.Fatal("the child did not compress")
	}
	select {
	case <-first.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the child did not retire")
	}
	if first.cmd.ProcessState == nil || !first.cmd.ProcessState.Exited() {
		t.Errorf("retired child's process: %v", first.cmd.ProcessState)
	}
	if second := compress(); second == nil || second == first {
		t.Error("no new child for the next loop")
	}
}

// TestChildRejectsBadFrames: the child reads only the frames the parent
// writes, and a length past maxFrame ends it with an error, not an
// allocation of that size.
func TestChildRejectsBadFrames(t *testing.T) {
	frame := func(n uint32, body []byte) []byte {
		h := make([]byte, 11)
		binary.BigEndian.PutUint32(h[0:], 7)
		h[4] = 3
		h[5], h[6] = 1, 1
		binary.BigEndian.PutUint32(h[7:], n)
		return append(h, body...)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"empty", nil, true},
		{"one body", frame(4, []byte("abcd")), true},
		{"too large", frame(maxFrame+1, nil), false},
		{"cut short", frame(100, []byte("abc")), false},
		{"cut header", []byte{0, 0, 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := serveChild(bytes.NewReader(tc.in), &out)
			if (err == nil) != tc.ok {
				t.Fatalf("serveChild: %v, want ok=%v", err, tc.ok)
			}
			if !strings.HasPrefix(out.String(), handshake) {
				t.Errorf("output starts %q, not the handshake", out.String())
			}
			if tc.name == "one body" {
				r := bytes.NewReader(out.Bytes()[len(handshake):])
				var seq uint32
				_ = binary.Read(r, binary.BigEndian, &seq)
				gz, err1 := readFrameFrom(r)
				br, err2 := readFrameFrom(r)
				if seq != 7 || err1 != nil || err2 != nil || len(gz) == 0 || len(br) == 0 {
					t.Errorf("answer: seq %d, gzip %d bytes (%v), brotli %d bytes (%v)", seq, len(gz), err1, len(br), err2)
				}
			}
		})
	}
}

func readFrameFrom(r io.Reader) ([]byte, error) {
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// TestBorrowsOnlyToCompressHere: serving keeps its procs while the child
// compresses; a loop borrows the free cores only when bodies are compressed
// in this process, and CompressAndRelease for its release step. Bodies that
// lack nothing (a version whose part and brotli were stored) start no child
// and borrow nothing.
func TestBorrowsOnlyToCompressHere(t *testing.T) {
	defer UseEffort(Fast)()
	for _, tc := range []struct {
		name    string
		child   bool
		done    bool // the bodies arrive compressed
		release bool
		want    int
	}{
		{"child", true, false, false, 0},
		{"child, then release", true, false, true, 1},
		{"in-process", false, false, false, 1},
		{"in-process, then release", false, false, true, 2},
		{"nothing to make", true, true, false, 0},
		{"nothing to make, nothing to release", true, true, true, 0},
		{"nothing to make in-process", false, true, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requestsComeIn(t)
			if tc.child {
				offloadOn(t)
			}
			borrows := 0
			prev := borrowCores
			borrowCores = func() func() { borrows++; return func() {} }
			t.Cleanup(func() { borrowCores = prev })
			var bodies, want []*Body
			for _, b := range offloadBodies()[:5] {
				w := NewBody(b, "")
				w.Compress()
				want = append(want, w)
				if tc.done {
					bodies = append(bodies, w)
				} else {
					bodies = append(bodies, NewBody(b, ""))
				}
			}
			borrows = 0
			pooled.Store(false) // what the set-up's compression pooled is not this release's
			if tc.release {
				CompressAndRelease(bodies, 0)
			} else {
				CompressAll(bodies)
			}
			for i, b := range bodies {
				if g, w := len(b.Representations()), len(want[i].Representations()); g != w {
					t.Errorf("body %d (%d bytes): %d representations, want %d", i, len(b.JSON), g, w)
				}
			}
			switch {
			case tc.child && tc.done && off.c != nil:
				t.Error("a compression child was started for bodies that lack nothing")
			case tc.child && !tc.done && off.c.answered.Load() == 0:
				t.Error("the child compressed nothing")
			}
			if borrows != tc.want {
				t.Errorf("borrowed %d times, want %d", borrows, tc.want)
			}
		})
	}
}

// TestWorkersGoBackToTheChild: an in-process worker that found no requests
// coming in leaves the work to the child again once they do, instead of
// compressing the rest of the loop beside them.
func TestWorkersGoBackToTheChild(t *testing.T) {
	defer UseEffort(Fast)()
	offloadOn(t)
	var asked atomic.Int32
	prev := serving
	serving = func() bool { return asked.Add(1) > 1 } // a lull at the first look only
	t.Cleanup(func() { serving = prev })
	var bodies []*Body
	for range 40 {
		bodies = append(bodies, NewBody(offloadBodies()[4], ""))
	}
	CompressAll(bodies)
	for i, b := range bodies {
		if len(b.Representations()) != 3 {
			t.Fatalf("body %d: %d representations, want identity, gzip and brotli", i, len(b.Representations()))
		}
	}
	// The worker that saw the lull compresses one body; the child the rest.
	if n, want := off.c.answered.Load(), int64(len(bodies)-1); n < want {
		t.Errorf("the child compressed %d of %d bodies, want at least %d", n, len(bodies), want)
	}
}
