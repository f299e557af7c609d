package edition

import (
	"sync"
	"weak"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// bodySet is an edition's distinct bodies. Read from an index, each is an
// entry of some 70 bytes (where its encodings are, their lengths and
// checksums), made into a representation.Body, with its header fields, when
// a request first needs it, and kept only while something uses it (a memo's
// answer, a request in flight): a replica holds the index and what is hot,
// whatever the version's size. Made in memory (New, a pack), they are all
// made at once.
type bodySet struct {
	entries []entry
	segs    []*blob.Segment // the segments the entries name, as the index lists them
	locks   [64]sync.Mutex  // guards live, by ref
	live    []weak.Pointer[representation.Body]

	made []*representation.Body // a set made in memory
}

// entry is one body as an index has it.
type entry struct {
	id   catalog.Sum
	lang byte
	enc  [3]entryEnc // identity, gzip, brotli
}

type entryEnc struct {
	n   uint32
	sum uint64
	seg uint16 // noSegment: not stored
	off uint32
}

// count is the number of bodies.
func (s *bodySet) count() int { return max(len(s.entries), len(s.made)) }

// get makes or finds the body at r.
func (s *bodySet) get(r ref) *representation.Body {
	if s.made != nil {
		return s.made[r]
	}
	if int(r) >= len(s.entries) {
		return nil
	}
	mu := &s.locks[r%uint32(len(s.locks))]
	mu.Lock()
	defer mu.Unlock()
	if b := s.live[r].Value(); b != nil {
		return b
	}
	e := &s.entries[r]
	src := s.sources(e)
	b := representation.Stored(langOf(e.lang), src[0], src[1], src[2])
	b.ID = e.id
	s.live[r] = weak.Make(b)
	return b
}

// sources are where an entry's encodings are.
func (s *bodySet) sources(e *entry) [3]representation.Source {
	var src [3]representation.Source
	for j, x := range e.enc {
		if j > 0 && x.n == 0 {
			continue // no such encoding
		}
		src[j] = representation.Source{Len: int(x.n), Sum: x.sum}
		if x.seg != noSegment {
			src[j].Seg, src[j].Off = s.segs[x.seg], int64(x.off)
		}
	}
	return src
}

// each calls f with every body's address, language and sources, without
// making the bodies: an import that follows this edition reuses them.
func (s *bodySet) each(f func(r ref, id catalog.Sum, lang string)) {
	for i := range s.entries {
		e := &s.entries[i]
		f(ref(i), e.id, langOf(e.lang))
	}
	for i, b := range s.made {
		f(ref(i), b.ID, b.Lang)
	}
}

// sourcesAt is where the encodings of the body at r are.
func (s *bodySet) sourcesAt(r ref) [3]representation.Source {
	if s.made == nil {
		return s.sources(&s.entries[r])
	}
	b := s.made[r]
	src := [3]representation.Source{b.Encoded.Source()}
	for j, e := range []*representation.Encoded{b.Gzip(), b.Brotli()} {
		if e != nil {
			src[j+1] = e.Source()
		}
	}
	return src
}

// id is the address of the body at r.
func (s *bodySet) id(r ref) catalog.Sum {
	if s.made != nil {
		return s.made[r].ID
	}
	return s.entries[r].id
}

// len is the identity length of the body at r.
func (s *bodySet) len(r ref) int {
	if s.made != nil {
		return s.made[r].Len()
	}
	return int(s.entries[r].enc[0].n)
}

func (s *bodySet) sizes() (identity, gz, br int) {
	if s.made != nil {
		return representation.Sizes(s.made)
	}
	for i := range s.entries {
		e := &s.entries[i]
		identity += int(e.enc[0].n)
		gz += int(e.enc[1].n)
		br += int(e.enc[2].n)
	}
	return identity, gz, br
}
