package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// TestPublishAfterLostLock: a writer whose lock session ended behind its
// back (the server restarted, idle_session_timeout, a proxy dropped it)
// while another writer took the lock, pruned the version the first one
// builds on and swept its segment and the files the first one had stored
// ahead, is refused when it publishes: a publish never commits a version
// naming a segment or a snapshot file the store does not hold. The store
// keeps the other writer's version active, whole.
func TestPublishAfterLostLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	seg := func(body string) *blob.Finished {
		f, _ := newSegment(t, "", []byte(body))
		return f
	}
	segOld, segOther, segNew := seg("a body of 00000000000000A1"), seg("a body of 00000000000000B2"), seg("a body of 00000000000000C3")
	pub := func(id string, retain int, segs ...string) store.Publication {
		return store.Publication{ManifestID: id, Version: "v-" + id, Branch: "b", Files: storetest.Files(id),
			Index: []byte("index of " + id), Segments: segs, Retain: retain, Now: time.Now()}
	}
	for _, tc := range []struct {
		name string
		// late is the lost writer's publication, after the other writer's
		// version pruned and swept 00000000000000A1's.
		late func(stored map[string]string) store.Publication
	}{
		{"naming a swept segment", func(map[string]string) store.Publication {
			q := pub("00000000000000C3", 2, segOld.Sum, segNew.Sum)
			q.Segment = segNew
			return q
		}},
		{"naming swept files", func(stored map[string]string) store.Publication {
			q := pub("00000000000000C3", 2, segNew.Sum)
			q.Segment, q.Files, q.Stored = segNew, nil, stored
			return q
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := freshSchema(t, "lostlock")
			setup := open(t, u)
			unlock, err := setup.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p := pub("00000000000000A1", 0, segOld.Sum)
			p.Segment = segOld
			if _, err := setup.Publish(p); err != nil {
				t.Fatal(err)
			}
			unlock()

			app := fmt.Sprintf("lost-writer-%08x", rand.Uint32())
			lost := open(t, u+"&application_name="+app)
			lostUnlock, err := lost.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer lostUnlock()
			stored, err := lost.PutFiles(storetest.Files("00000000000000C3"))
			if err != nil {
				t.Fatal(err)
			}
			// The lost writer's lock session ends.
			admin, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			var n int
			if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, app).Scan(&n); err != nil || n != 1 {
				t.Fatalf("ended %d lock sessions, %v; want 1", n, err)
			}
			// Another writer takes the lock, publishes with --retain 1: the
			// version the lost writer builds on is pruned, its segment and the
			// files stored ahead swept.
			other := open(t, u)
			lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			otherUnlock, err := other.Lock(lctx)
			if err != nil {
				t.Fatal(err)
			}
			q := pub("00000000000000B2", 1, segOther.Sum)
			q.Segment = segOther
			if pruned, err := other.Publish(q); err != nil || len(pruned) != 1 {
				t.Fatalf("the other writer's publish pruned %v, %v", pruned, err)
			}
			otherUnlock()

			if _, err := lost.Publish(tc.late(stored)); err == nil {
				t.Errorf("the lost writer's publish succeeded")
			}
			ptr, _, err := other.Active()
			if err != nil || ptr.ManifestID != "00000000000000B2" {
				t.Fatalf("active %s, %v; want the other writer's version", ptr.ManifestID, err)
			}
			vs, err := other.Versions()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if _, _, err := other.Verify(v.ManifestID, ""); err != nil {
					t.Errorf("version %s: %v", v.ManifestID, err)
				}
				for _, sum := range v.Segments {
					size := map[string]int64{segOld.Sum: segOld.Size, segOther.Sum: segOther.Size, segNew.Sum: segNew.Size}[sum]
					if _, err := other.Segment(sum, size, nil); err != nil {
						t.Errorf("version %s names segment %.12s: %v", v.ManifestID, sum, err)
					}
				}
			}
			if _, err := other.Lookup("00000000000000C3"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused version is stored: %v", err)
			}
		})
	}
}
