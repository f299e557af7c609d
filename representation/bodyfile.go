package representation

import (
	"runtime"
	"sync/atomic"
)

// The body file: a compressed representation of LargeBody bytes or more is
// also written to one memory file of the process (a memfd on Linux), and the
// edge sends it from there with sendfile instead of writev from the heap.
//
// Why: the ~120 KB gzip lists were the one place whose p99 stayed over 1.5×
// nginx's under a saturating load. The one serving thread spent 76 % of its
// time in their writev, copying each answer into the socket; sendfile hands
// the kernel the file's pages instead. A throwaway build that did so lowered
// their p99 to 0.71–0.90× nginx's (BENCHMARKS.md § Stop 49).
//
// Only compressed representations: they are what the lists are sent as to
// clients that accept gzip or brotli, and a second copy of them is 8.9 MB of
// the 212 MB an 18-locale version renders (identity bodies of 64 KiB and more
// would be 62 MB more; BENCHMARKS.md § Stop 50). The heap copy stays the
// representation's Bytes, which everything else reads.
//
// A range of the file lives as long as the fileCopy that names it: its
// cleanup punches the range out of the file once no Encoded refers to it (an
// edition, a memo entry, an answer being written). Pages already handed to
// the socket are the kernel's and stay valid after the punch.

// fileFrom is the smallest representation written to the body file; 0: none
// is (UseBodyFile).
var fileFrom atomic.Int64

// UseBodyFile makes compressed representations made after the call go to the
// body file as well from from bytes on (0: none do, the default) and returns
// a function that restores the previous size. The server calls it with
// LargeBody: a process that only builds or imports versions sends nothing, and
// a copy would cost it a write of every large list for nothing. The edge's
// tests call it with a smaller size, so that the sample data's bodies are
// sent as the large lists are.
func UseBodyFile(from int) (restore func()) {
	prev := fileFrom.Swap(int64(max(from, 0)))
	return func() { fileFrom.Store(prev) }
}

// fileCopy names an encoding's bytes in the body file. Encoded values are
// copied (a body's gzip moves to the struct that adds brotli), so they share
// this pointer, and the range lives while any of them does. Its 16 bytes keep
// it out of the tiny allocator, whose blocks are shared: a cleanup attached
// to an object in one may wait for its neighbours.
type fileCopy struct{ r fileRange }

// fileRange is a range of the body file: page-aligned, so that punching it
// touches no neighbour.
type fileRange struct{ off, size int64 }

// toFile copies b to the body file and returns where it is; nil when b is not
// a compressed representation that goes there, or the file cannot take it
// (the representation is then written from the heap, as before).
func toFile(b []byte, encoding string) *fileCopy {
	if from := fileFrom.Load(); encoding == "" || from == 0 || int64(len(b)) < from {
		return nil
	}
	r, ok := writeToFile(b)
	if !ok {
		return nil
	}
	f := &fileCopy{r}
	fileHeld.Add(r.size)
	runtime.AddCleanup(f, freeRange, r)
	return f
}

// fileHeld is how many bytes of the body file are in use (FileBytes).
var fileHeld atomic.Int64

// FileBytes is how many bytes of memory the body file holds: the pages of
// the representations that are in it. They are not in the process's heap,
// and an operator counting the service's memory adds them to its RSS.
func FileBytes() int64 { return fileHeld.Load() }

func freeRange(r fileRange) {
	punch(r)
	fileHeld.Add(-r.size)
}

// InFile reports where the representation's bytes lie in the body file, for
// sendfile; ok is false when they are not there. The caller keeps e while
// it sends: the range is freed once no Encoded refers to it.
func (e *Encoded) InFile() (fd int, off int64, ok bool) {
	if e.file == nil {
		return -1, 0, false
	}
	fd = bodyFileFD()
	return fd, e.file.r.off, fd >= 0
}
