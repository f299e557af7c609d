package edge

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunks is a socket whose reads return its chunks one per call (as much of
// each as the caller's buffer takes), then io.EOF.
type chunks struct {
	parts [][]byte
	reads int // Read calls: the system calls a real socket would make
}

func (s *chunks) Read(b []byte) (int, error) {
	s.reads++
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(b, s.parts[0])
	if s.parts[0] = s.parts[0][n:]; len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	return n, nil
}
func (s *chunks) Write([]byte) (int, error)            { return 0, errors.New("not written") }
func (s *chunks) Writev([]byte, []byte) (int64, error) { return 0, errors.New("not written") }

// TestReadAhead: the one-byte read fasthttp waits for a request with takes
// what the socket has, and the reads after it are given the rest, in order,
// without asking the socket again.
func TestReadAhead(t *testing.T) {
	const req = "GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n"
	long := "GET /v1/version HTTP/1.1\r\nX-Long: " + strings.Repeat("a", readAhead) + "\r\n\r\n"
	for _, tc := range []struct {
		name  string
		parts []string
		sizes []int // the caller's buffer for each read after the first, one byte
		reads int   // socket reads to have the whole of parts
	}{
		{"one segment, read whole", []string{req}, []int{16 << 10}, 1},
		{"one segment, read in small pieces", []string{req}, []int{7, 7, 7, 7, 7, 7, 7, 7, 7}, 1},
		{"two segments", []string{req[:20], req[20:]}, []int{16 << 10, 16 << 10}, 2},
		{"one byte, then the rest", []string{req[:1], req[1:]}, []int{16 << 10}, 2},
		{"longer than the read-ahead", []string{long}, []int{16 << 10}, 2},
		{"two requests", []string{req + req}, []int{16 << 10}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := strings.Join(tc.parts, "")
			sock := &chunks{}
			for _, p := range tc.parts {
				sock.parts = append(sock.parts, []byte(p))
			}
			c := newDrainConn(nil, sock)
			var got bytes.Buffer
			var one [1]byte
			if n, err := c.Read(one[:]); n != 1 || err != nil {
				t.Fatalf("one-byte read: %d, %v", n, err)
			}
			got.Write(one[:])
			for i := 0; got.Len() < len(want); i++ {
				size := tc.sizes[min(i, len(tc.sizes)-1)]
				b := make([]byte, size)
				n, err := c.Read(b)
				if err != nil {
					t.Fatalf("read %d: %v after %q", i, err, got.Bytes())
				}
				got.Write(b[:n])
			}
			if got.String() != want {
				t.Fatalf("read %q, want %q", got.Bytes(), want)
			}
			if sock.reads != tc.reads {
				t.Errorf("%d socket reads, want %d", sock.reads, tc.reads)
			}
			if n := c.in.Buffered(); n != 0 {
				t.Errorf("%d bytes read ahead are left once the request is read", n)
			}
			if !c.unanswered.Load() || !c.spoke {
				t.Error("a read that returned bytes did not mark the request unanswered")
			}
		})
	}
	t.Run("error", func(t *testing.T) {
		c := newDrainConn(nil, &chunks{})
		var one [1]byte
		if n, err := c.Read(one[:]); n != 0 || err != io.EOF {
			t.Fatalf("read: %d, %v; want 0, EOF", n, err)
		}
		if c.in.Buffered() != 0 || c.spoke {
			t.Error("a read that returned nothing kept bytes or marked the connection")
		}
	})
}
