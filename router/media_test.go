package router_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router/apitest"
)

// testMediaBytes is the file the generic test handler's mirror holds at
// https://media.example/icon.png (besides a logo base for every .png URL).
var testMediaBytes = []byte("\x89PNG\r\n\x1a\n" + "not a real image, but bytes")

// testMediaHash is that file's name.
func testMediaHash() string {
	sum := sha256.Sum256(testMediaBytes)
	return hex.EncodeToString(sum[:])
}

// TestMediaRange holds /media's Range handling to RFC 9110 § 14 on both stacks:
// a suffix of 0 bytes is unsatisfiable, an unknown unit is ignored, overlapping
// and adjacent ranges are merged, and a header of more than 16 ranges gets the
// whole file.
func TestMediaRange(t *testing.T) {
	t.Parallel()
	viaBoth(t, mediaRange)
}

func mediaRange(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	check := apitest.New(t)
	h := build(edition.Serve(active(t)), nil)
	url, n := "/media/"+testMediaHash(), len(testMediaBytes)
	var many []string // 17 single bytes, none touching another
	for i := range 17 {
		many = append(many, fmt.Sprintf("%d-%d", 2*i, 2*i))
	}
	for _, tc := range []struct {
		name, rng, ifRange string
		status             int
		contentRange       string // of a single-part 206, or of a 416
		parts              int    // of a multipart 206
	}{
		{"none", "", "", http.StatusOK, "", 0},
		{"first bytes", "bytes=0-3", "", http.StatusPartialContent, fmt.Sprintf("bytes 0-3/%d", n), 0},
		{"suffix", "bytes=-4", "", http.StatusPartialContent, fmt.Sprintf("bytes %d-%d/%d", n-4, n-1, n), 0},
		{"empty suffix", "bytes=-0", "", http.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("bytes */%d", n), 0},
		{"past the end", "bytes=100000-", "", http.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("bytes */%d", n), 0},
		{"one past the end dropped", "bytes=100000-,0-1", "", http.StatusPartialContent, fmt.Sprintf("bytes 0-1/%d", n), 0},
		{"malformed", "bytes=3-1", "", http.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("bytes */%d", n), 0},
		{"signed", "bytes=+1-2", "", http.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("bytes */%d", n), 0},
		{"unknown unit", "items=0-3", "", http.StatusOK, "", 0},
		{"overlapping", "bytes=0-3,2-5", "", http.StatusPartialContent, fmt.Sprintf("bytes 0-5/%d", n), 0},
		{"adjacent, out of order", "bytes=4-7,0-3", "", http.StatusPartialContent, fmt.Sprintf("bytes 0-7/%d", n), 0},
		{"contained", "bytes=0-,5-9", "", http.StatusPartialContent, fmt.Sprintf("bytes 0-%d/%d", n-1, n), 0},
		{"two apart", "bytes=0-1,10-11", "", http.StatusPartialContent, "", 2},
		{"16 apart", "bytes=" + strings.Join(many[:16], ","), "", http.StatusPartialContent, "", 16},
		{"17 apart", "bytes=" + strings.Join(many, ","), "", http.StatusOK, "", 0},
		{"If-Range of another file", "bytes=-0", `"other"`, http.StatusOK, "", 0},
		{"If-Range of this file", "bytes=0-3", `"` + testMediaHash() + `"`, http.StatusPartialContent, fmt.Sprintf("bytes 0-3/%d", n), 0},
	} {
		res := check.Do(t, h, get(url, "Range", tc.rng, "If-Range", tc.ifRange))
		body, _ := io.ReadAll(res.Body)
		cr := res.Header.Get("Content-Range")
		switch {
		case res.StatusCode != tc.status:
			t.Errorf("%s (Range %q): %d %.100q, want %d", tc.name, tc.rng, res.StatusCode, body, tc.status)
		case tc.status == http.StatusOK && !bytes.Equal(body, testMediaBytes):
			t.Errorf("%s: %d bytes, want the whole file", tc.name, len(body))
		case tc.contentRange != "" && cr != tc.contentRange:
			t.Errorf("%s: Content-Range %q, want %q", tc.name, cr, tc.contentRange)
		case tc.parts > 0:
			_, params, err := mime.ParseMediaType(res.Header.Get("Content-Type"))
			if err != nil {
				t.Fatalf("%s: Content-Type %q: %v", tc.name, res.Header.Get("Content-Type"), err)
			}
			mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
			parts := 0
			for ; ; parts++ {
				if _, err := mr.NextPart(); err != nil {
					break
				}
			}
			if parts != tc.parts {
				t.Errorf("%s: %d parts, want %d", tc.name, parts, tc.parts)
			}
		case tc.status == http.StatusPartialContent:
			var first, last int
			if _, err := fmt.Sscanf(cr, "bytes %d-%d/", &first, &last); err != nil || !bytes.Equal(body, testMediaBytes[first:last+1]) {
				t.Errorf("%s: %q for Content-Range %q", tc.name, body, cr)
			}
		}
	}
}
