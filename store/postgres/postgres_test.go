package postgres_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
)

// The server and the fresh schemas come from storetest, which live's replica
// tests use too.
var _ store.Lazy = (*postgres.Store)(nil)

var (
	serverURL   = storetest.PostgresURL
	freshSchema = storetest.PostgresSchema
)

func open(t *testing.T, u string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestCompliance holds the PostgreSQL store to the contract of store.Backend.
func TestCompliance(t *testing.T) {
	serverURL(t)
	var mu sync.Mutex
	urls := map[string]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T, name string) store.Backend {
			mu.Lock()
			defer mu.Unlock()
			key := t.Name() + "/" + name
			if urls[key] == "" {
				urls[key] = freshSchema(t, name)
			}
			s := open(t, urls[key])
			s.CacheDir = t.TempDir() // each handle a replica of its own
			return s
		},
		Damage: func(t *testing.T, b store.Backend, id, file string) {
			m, _, err := b.ReadIndex(id, "")
			if m.Files[file] == "" {
				t.Fatalf("no file %s in %s: %v", file, id, err)
			}
			appendSpace(t, b, "refdata_contents", "sha256 = $1 AND chunk = 0", m.Files[file])
		},
		DamageIndex: func(t *testing.T, b store.Backend, id string) {
			appendSpace(t, b, "refdata_index_parts", "manifest_id = $1 AND part = 0", id)
		},
		DamageSegment: func(t *testing.T, b store.Backend, sum string) {
			appendSpace(t, b, "refdata_segments", "sha256 = $1 AND chunk = 0", sum)
		},
		OpenAbsent: func(t *testing.T) store.Backend {
			s, err := postgres.OpenLazy(context.Background(), freshSchema(t, "absent"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			return s
		},
	})
}

// appendSpace damages one row of table, the one where selects, behind the
// store's back: a byte more in its body, its checksum unchanged.
func appendSpace(t *testing.T, b store.Backend, table, where string, args ...any) {
	t.Helper()
	s := b.(*postgres.Store)
	conn, err := pgx.Connect(context.Background(), serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(context.Background(), "UPDATE "+pgx.Identifier{s.Schema(), table}.Sanitize()+
		" SET body = body || '\\x20'::bytea WHERE "+where, args...)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("damage %s %v: %v (%d rows)", table, args, err, tag.RowsAffected())
	}
}

// TestMigrationsOnce: two stores opening one schema together apply each
// migration once, and a reopen applies none.
func TestMigrationsOnce(t *testing.T) {
	u := freshSchema(t, "migrate")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), u)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
	s := open(t, u)
	files, _ := os.ReadDir("migrations")
	n, err := s.SchemaVersion(context.Background())
	if err != nil || n != len(files) || n == 0 {
		t.Errorf("schema version %d, %v; want %d, one per file in migrations/", n, err, len(files))
	}
}

// TestReplicaServingNothingNotWaitedFor: a replica that serves no version (its
// first load failed: a cache directory it cannot write) has nothing to switch
// and is not ready, so a publish does not wait for it to stage: the switch is at
// once, as with no replica, rather than at the stage bound for every publish
// while it stays so.
func TestReplicaServingNothingNotWaitedFor(t *testing.T) {
	s := open(t, freshSchema(t, "nothing"))
	s.StageBound = 2 * time.Second // bounds what the failure costs
	if err := s.Heartbeat("failed/1", "", ""); err != nil {
		t.Fatal(err)
	}
	p := bigVersion("00000000000000C1")
	p.Previous, p.DiffBody = "", nil
	if _, err := s.Publish(p); err != nil {
		t.Fatal(err)
	}
	if ptr, _, err := s.Active(); err != nil || ptr.ManifestID != p.ManifestID || !ptr.ActivateAt.IsZero() {
		t.Errorf("pointer %+v, %v; want %s active at once", ptr, err, p.ManifestID)
	}
}
