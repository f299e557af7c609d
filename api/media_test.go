package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"

	"github.com/refdata/refdata/media"
)

// fakeMedia is a media library in memory: upstream URL → bytes.
type fakeMedia map[string][]byte

func (m fakeMedia) Lookup(u string) (media.File, bool) {
	b, ok := m[u]
	if !ok {
		return media.File{}, false
	}
	sum := sha256.Sum256(b)
	return media.File{SHA256: hex.EncodeToString(sum[:]), ContentType: "image/png", Size: int64(len(b))}, true
}

func (m fakeMedia) Open(_ context.Context, sum string) (io.ReadSeekCloser, error) {
	for _, b := range m {
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) == sum {
			return struct {
				io.ReadSeeker
				io.Closer
			}{bytes.NewReader(b), io.NopCloser(nil)}, nil
		}
	}
	return nil, fmt.Errorf("media %s: %w", sum, fs.ErrNotExist)
}

// testMedia is the mirror every test handler serves: one small PNG.
var testMedia = fakeMedia{"https://media.example/icon.png": []byte("\x89PNG\r\n\x1a\n" + "not a real image, but bytes")}

// testMediaHash is testMedia's one file's name.
func testMediaHash() string {
	f, _ := testMedia.Lookup("https://media.example/icon.png")
	return f.SHA256
}
