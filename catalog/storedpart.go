package catalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"

	"github.com/refdata/refdata/representation"
)

// A stored part is a part (WritePart) an import builds once and keeps with the
// version it publishes, so that every server swapping to that version from
// the one it was built after reads it instead of rendering and gzipping the
// categories that changed (package builder's child, seconds of CPU for 18
// locales). It is the child's part with what a server needs to check that it
// was built after the edition the server has:
//
//   - the gzip level its new bodies were compressed at, which must be the
//     server's, so every server makes the same bytes and ETags;
//   - each source category's key and whether it was reused, which must be what
//     planning the version's files after the server's edition gives;
//   - the previous edition's bodies the part names, by ETag and language
//     rather than by place: a server's edition holds the same bodies in
//     another arrangement once bodies with equal bytes have been shared.
//
// A server whose edition lacks a named body, or plans otherwise, gets
// ErrPartMismatch and builds the version as before.

// ErrPartMismatch: a stored part was built after another edition than the one
// it is read after, or at another gzip level.
var ErrPartMismatch = errors.New("the stored part was built after another edition")

// BuildStoredPart builds files after prev as a builder child would, on every
// core, and returns the stored part. prev must not be nil.
func BuildStoredPart(files map[string][]byte, prev *Edition) ([]byte, error) {
	p := PlanBuild(files, prev)
	full := p.knownIndex()
	e, err := BuildPart(p)
	if err != nil {
		return nil, err
	}
	// Only the known bodies the part names go with it, in the order it first
	// names them.
	var named []KnownBody
	seen := map[KnownBody]bool{}
	e.walkPart(p, func(b *representation.Body) {
		k := KnownBody{ETag: b.ETag(), Lang: b.Lang}
		if _, ok := full[k]; ok && !seen[k] {
			seen[k] = true
			named = append(named, k)
		}
	})
	// The header is a plan without files or language=all bodies: what a
	// server checks, written and read as a plan is.
	head := &BuildPlan{Keys: p.Keys, Reused: p.Reused, Known: named, Effort: p.Effort}
	var buf bytes.Buffer
	if err := WritePlan(&buf, head); err != nil {
		return nil, err
	}
	if err := WritePart(&buf, e, head); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadStoredPart reads a stored part into the edition of files (the version's
// files, checked against its manifest) after prev, as ReadPart reads a
// child's. It returns an error wrapping ErrPartMismatch when the part was not
// built after an edition like prev, at this process's gzip level; any other
// error means the bytes are broken.
func ReadStoredPart(b []byte, files map[string][]byte, prev *Edition) (*Edition, error) {
	if prev == nil {
		return nil, fmt.Errorf("%w: there is no previous edition", ErrPartMismatch)
	}
	// One buffered reader for both: the wire readers take it as it is.
	r := bufio.NewReaderSize(bytes.NewReader(b), wireBuffer)
	head, err := ReadPlan(r, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("read the stored part: %w", err)
	}
	p := planBuild(files, prev)
	p.Effort = representation.CurrentEffort()
	switch {
	case head.Effort.Gzip != p.Effort.Gzip:
		return nil, fmt.Errorf("%w: gzip level %d, this server's is %d", ErrPartMismatch, head.Effort.Gzip, p.Effort.Gzip)
	case head.Keys != p.Keys:
		return nil, fmt.Errorf("%w: it was built from other files", ErrPartMismatch)
	case head.Reused != p.Reused:
		return nil, fmt.Errorf("%w: its reused categories differ", ErrPartMismatch)
	}
	bodies := prev.Bodies()
	have := make(map[KnownBody]*representation.Body, len(bodies)) // sized: growing it was a third of its cost
	for _, body := range bodies {
		have[KnownBody{ETag: body.ETag(), Lang: body.Lang}] = body
	}
	p.known = make([]*representation.Body, len(head.Known))
	for i, k := range head.Known {
		if p.known[i] = have[k]; p.known[i] == nil {
			return nil, fmt.Errorf("%w: it names a body the edition does not have (ETag %s)", ErrPartMismatch, k.ETag)
		}
	}
	return ReadPart(r, int64(len(b)), p, prev)
}
