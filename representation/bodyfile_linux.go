//go:build linux

package representation

import (
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

var bodyFile struct {
	once sync.Once
	fd   int          // -1: none could be made
	end  atomic.Int64 // where the last range taken ends; ranges are never reused
}

var pageSize = int64(os.Getpagesize())

// bodyFileFD is the body file's descriptor, made on first use; -1 when the
// system has no memory files.
func bodyFileFD() int {
	bodyFile.once.Do(func() {
		fd, err := unix.MemfdCreate("refdata-bodies", unix.MFD_CLOEXEC)
		if err != nil {
			fd = -1
		}
		bodyFile.fd = fd
	})
	return bodyFile.fd
}

// writeToFile writes b at the next page-aligned offset. Offsets only grow:
// a freed range is a hole, which costs no memory, and the file's size limit
// (2^63 bytes) is out of reach.
func writeToFile(b []byte) (fileRange, bool) {
	fd := bodyFileFD()
	if fd < 0 {
		return fileRange{}, false
	}
	size := (int64(len(b)) + pageSize - 1) / pageSize * pageSize
	r := fileRange{off: bodyFile.end.Add(size) - size, size: size}
	for done := 0; done < len(b); {
		n, err := unix.Pwrite(fd, b[done:], r.off+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			// Out of memory for the file (ENOSPC, ENOMEM): what was
			// written is freed, the representation stays on the heap.
			punch(r)
			return fileRange{}, false
		}
		done += n
	}
	return r, true
}

// punch frees a range's pages; the file keeps its size. It runs on the
// runtime's cleanup goroutine, and reads the descriptor through the Once that
// set it.
func punch(r fileRange) {
	_ = unix.Fallocate(bodyFileFD(), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, r.off, r.size)
}
