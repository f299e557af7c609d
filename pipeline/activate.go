package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/store"
)

// Activate makes a retained version the active one (an operator's roll back
// or forward), storing the diff from the version served until then so
// /v1/diff/latest says what changed. It waits at most DefaultLockTimeout for
// the store's writer lock.
func Activate(ctx context.Context, st store.Backend, id string, now time.Time) (store.Pointer, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultLockTimeout)
	defer cancel()
	unlock, err := st.Lock(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// As an import says it: the wait's end alone ("context deadline
			// exceeded") does not tell an operator another writer holds the store.
			err = fmt.Errorf("gave up waiting for the store lock held by %s: %w", cmp.Or(st.LockHolder(), "another process"), err)
		}
		return store.Pointer{}, err
	}
	defer unlock()
	found, err := st.Lookup(id)
	if err != nil {
		return store.Pointer{}, fmt.Errorf("%s is not retained here (see /v1/versions): %w", id, err)
	}
	var diffBody []byte
	if cur, _, err := st.Active(); err == nil && cur.ManifestID != found {
		if _, err := st.ReadDiff(cur.ManifestID, found); err != nil {
			if diffBody, err = diffStored(st, cur.ManifestID, found); err != nil {
				return store.Pointer{}, err
			}
		}
	}
	return st.Activate(found, diffBody, now)
}

// diffStored diffs two stored versions, stamped with the newer one's
// publication, as a server computes a diff (package live).
func diffStored(st store.Backend, from, to string) ([]byte, error) {
	im := &importer{st: st, r: &Report{}}
	a, err := im.baseEdition(from)
	if err != nil {
		return nil, err
	}
	b, err := im.baseEdition(to)
	if err != nil {
		return nil, err
	}
	ms, err := st.Versions()
	if err != nil {
		return nil, err
	}
	var newest store.Manifest
	for _, m := range ms {
		if (m.ManifestID == from || m.ManifestID == to) && m.Seq > newest.Seq {
			newest = m
		}
	}
	d, err := catalog.Diff(a, b, newest.PublishedAt)
	if err != nil {
		return nil, err
	}
	return catalog.DiffBody(d)
}
