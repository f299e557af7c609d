//go:build linux

package representation

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hexBody is n bytes of JSON whose gzip and brotli are about half its size:
// random hex digits, which no coder shrinks below 4 bits a byte.
func hexBody(t *testing.T, n int) *Body {
	t.Helper()
	raw := make([]byte, n/2)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	return NewBody([]byte(`"`+hex.EncodeToString(raw)[:n-2]+`"`), "")
}

// fromFile reads n bytes of the body file at off.
func fromFile(t *testing.T, fd int, off int64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if got, err := unix.Pread(fd, b, off); err != nil || got != n {
		t.Fatalf("read %d of %d bytes at %d of the body file: %v", got, n, off, err)
	}
	return b
}

func needBodyFile(t *testing.T) {
	t.Helper()
	if bodyFileFD() < 0 {
		t.Skip("no body file on this system")
	}
}

// TestBodyFileHoldsLargeCompressed: once UseBodyFile is called, the
// compressed representations of its size or more are in the body file, byte
// for byte; identity representations and smaller compressed ones are not,
// and before the call none is.
func TestBodyFileHoldsLargeCompressed(t *testing.T) {
	needBodyFile(t)
	before := hexBody(t, 200<<10)
	before.Compress()
	for _, r := range before.Representations() {
		if _, _, ok := r.InFile(); ok {
			t.Errorf("a %d-byte representation is in the body file before UseBodyFile", len(r.Bytes))
		}
	}
	defer UseBodyFile(LargeBody)()
	large, small := hexBody(t, 200<<10), hexBody(t, 40<<10)
	large.Compress()
	small.Compress()
	if _, _, ok := large.Encoded.InFile(); ok {
		t.Error("an identity representation is in the body file")
	}
	reps := large.Representations()
	if len(reps) != 3 {
		t.Fatalf("%d representations of the large body, want 3", len(reps))
	}
	for _, r := range reps[1:] {
		if len(r.Bytes) < LargeBody {
			t.Fatalf("the %s representation is %d bytes: the test needs one over %d", r.Encoding.Value, len(r.Bytes), LargeBody)
		}
		fd, off, ok := r.InFile()
		if !ok {
			t.Errorf("the %s representation (%d bytes) is not in the body file", r.Encoding.Value, len(r.Bytes))
			continue
		}
		if off%pageSize != 0 {
			t.Errorf("the %s representation starts at %d, not on a page", r.Encoding.Value, off)
		}
		if got := fromFile(t, fd, off, len(r.Bytes)); !bytes.Equal(got, r.Bytes) {
			t.Errorf("the body file's copy of the %s representation differs from its bytes", r.Encoding.Value)
		}
	}
	for _, r := range small.Representations() {
		if _, _, ok := r.InFile(); ok {
			t.Errorf("a %d-byte representation is in the body file", len(r.Bytes))
		}
	}
	defer UseBodyFile(10 << 10)()
	smallNow := hexBody(t, 40<<10)
	smallNow.Compress()
	if _, _, ok := smallNow.Representations()[1].InFile(); !ok {
		t.Error("after UseBodyFile(10 KiB), a ~20 KiB gzip is not in the body file")
	}
}

// TestBodyFileFreesUnreachableRanges: a range lives while any Encoded that
// names it does — the gzip copied to the struct that adds brotli keeps it —
// and is punched out of the file once none does.
func TestBodyFileFreesUnreachableRanges(t *testing.T) {
	needBodyFile(t)
	defer UseBodyFile(LargeBody)()
	b := hexBody(t, 200<<10)
	b.CompressGzip()
	gz := b.Representations()[1]
	want := bytes.Clone(gz.Bytes)
	fd, off, ok := gz.InFile()
	if !ok {
		t.Fatal("the gzip is not in the body file")
	}
	gz = nil
	b.Compress() // adds brotli: a new struct, the gzip's Encoded copied into it
	collect()
	if got := fromFile(t, fd, off, len(want)); !bytes.Equal(got, want) {
		t.Fatal("the gzip's range was freed while the body that adds brotli still names it")
	}
	if _, off2, _ := b.Representations()[1].InFile(); off2 != off {
		t.Fatalf("the gzip moved in the body file (%d, was %d)", off2, off)
	}
	held := FileBytes()
	b = nil
	for deadline := time.Now().Add(10 * time.Second); ; {
		collect()
		if bytes.Equal(fromFile(t, fd, off, len(want)), make([]byte, len(want))) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the gzip's range still holds its bytes 10 s after nothing names it")
		}
	}
	if FileBytes() >= held {
		t.Errorf("FileBytes is %d after the body's ranges were freed, was %d", FileBytes(), held)
	}
}

// collect runs the collector and gives the cleanups it queued time to run.
func collect() {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
}
