package edge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/router"
)

// TestMediaStreams: a mirrored file above a megabyte leaves through the edge
// as it is read (chunked), not buffered whole per request by the router's
// adaptor; whole and in ranges it is the file's bytes, and the answers are the
// spec's.
func TestMediaStreams(t *testing.T) {
	t.Parallel()
	video := make([]byte, 3<<20)
	for i := range video {
		video[i] = byte(rand.IntN(256))
	}
	copy(video, "\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2") // an MP4's first box: the mirror stores only what sniffs as its type
	lib, err := media.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Put("https://media.example/clip.mp4", "video/mp4", video); err != nil {
		t.Fatal(err)
	}
	repo := &swappable{}
	repo.ed.Store(newest(t))
	router, err := router.New(&handler.Server{Repo: repo, Media: lib}, slog.New(slog.DiscardHandler), router.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, Config{Router: router, Active: repo.Active})
	sum := sha256.Sum256(video)
	target := "/media/" + hex.EncodeToString(sum[:])

	res, err := h.client.Get("http://" + h.addr + target)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || !bytes.Equal(got, video) {
		t.Fatalf("GET %s: %d, %d bytes (%v); want 200 and the file's %d", target, res.StatusCode, len(got), err, len(video))
	}
	if res.ContentLength != -1 || len(res.TransferEncoding) == 0 {
		t.Errorf("a %d-byte file left with Content-Length %d: buffered, not streamed", len(video), res.ContentLength)
	}
	whole := h.do(t, request("GET", target))
	part := h.do(t, request("GET", target, "Range", "bytes=1000-1999"))
	if !bytes.Equal(whole.body, video) || part.status != http.StatusPartialContent || !bytes.Equal(part.body, video[1000:2000]) {
		t.Errorf("whole: %d bytes; range: %d, %d bytes; want the file and its bytes 1000-1999", len(whole.body), part.status, len(part.body))
	}
}
