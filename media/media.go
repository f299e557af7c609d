// Package media owns the mirror of the images and videos the catalogs reference:
// files fetched from their host, stored once each under the sha256 of their bytes,
// and the index from each upstream URL to its file.
package media

import (
	"context"
	"io"
)

// File is one mirrored image or video.
type File struct {
	SHA256      string `json:"sha256"`      // lowercase hex of the bytes: the file's name and its strong ETag
	ContentType string `json:"contentType"` // one of Types
	Size        int64  `json:"size"`
}

// Path is the URL path a server answers the file at.
func (f File) Path() string { return "/media/" + f.SHA256 }

// Library is the mirror as a server reads it. Lookup is an in-memory look-up, cheap
// enough for every link a page renders.
type Library interface {
	// Lookup names the file mirrored from an upstream URL, exactly as a catalog holds it.
	Lookup(upstreamURL string) (File, bool)
	// Open reads a mirrored file by its hash; an unknown hash is an error.
	Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error)
	// Len is how many URLs the mirror holds. It only grows, so what was made
	// from the mirror needs looking at again only once it has changed.
	Len() int
}
