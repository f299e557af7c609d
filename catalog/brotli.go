package catalog

import "github.com/refdata/refdata/representation"

// AddedBrotli compresses the bodies of e whose bytes old has in none of its
// bodies (a body's ETag hashes its bytes), each once: what a server swapping
// from old to e compresses. It returns their brotli
// (representation.MarshalBrotli), how many streams it holds (bodies too small
// to compress have none) and how many it left out for not decoding to their
// body, for an import to store with the version; nil when e adds none.
func (e *Edition) AddedBrotli(old *Edition) (blob []byte, n, bad int) {
	have := map[string]bool{}
	for _, b := range old.Bodies() {
		have[b.ETag()] = true
	}
	var added []*representation.Body
	for _, b := range e.Bodies() {
		if !have[b.ETag()] {
			have[b.ETag()] = true
			added = append(added, b)
		}
	}
	if len(added) == 0 {
		return nil, 0, 0
	}
	return representation.MarshalBrotli(added)
}
