//go:build !linux

package representation

// The body file is Linux's (a memfd, sent with sendfile); elsewhere every
// representation is written from the heap.

func bodyFileFD() int                      { return -1 }
func writeToFile([]byte) (fileRange, bool) { return fileRange{}, false }
func punch(fileRange)                      {}
