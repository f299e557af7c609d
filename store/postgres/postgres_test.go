package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
)

// serverURL is the cluster the tests use: REFDATA_TEST_POSTGRES, which `make
// test` sets when `make pg-start` (tools/pg.sh) has one running. Without it the
// tests skip, unless REFDATA_REQUIRE_POSTGRES=1 (CI), where skipping fails.
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("REFDATA_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("REFDATA_REQUIRE_POSTGRES") == "1" {
			t.Fatal("REFDATA_REQUIRE_POSTGRES=1 but REFDATA_TEST_POSTGRES is empty: start one with make pg-start")
		}
		t.Skip("no PostgreSQL: run make pg-start, then make test (or set REFDATA_TEST_POSTGRES)")
	}
	return u
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// freshSchema creates an empty schema and returns a URL whose search_path is it:
// every test store is independent within one database.
func freshSchema(t *testing.T, name string) string {
	t.Helper()
	base := serverURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()+"_"+name), "_"), "_")
	schema = fmt.Sprintf("%.40s_%08x", schema, rand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

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
			return open(t, urls[key])
		},
		Damage: func(t *testing.T, b store.Backend, id, file string) {
			s := b.(*postgres.Store)
			conn, err := pgx.Connect(context.Background(), serverURL(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			tag, err := conn.Exec(context.Background(), "UPDATE "+pgx.Identifier{s.Schema(), "refdata_files"}.Sanitize()+
				" SET body = body || '\\x20'::bytea WHERE manifest_id = $1 AND name = $2", id, file)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("damage %s %s: %v (%d rows)", id, file, err, tag.RowsAffected())
			}
		},
	})
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
	n, err := s.SchemaVersion(context.Background())
	if err != nil || n != 1 {
		t.Errorf("schema version %d, %v; want 1", n, err)
	}
}

// TestNotify: a publish through one store reaches another's Changes.
func TestNotify(t *testing.T) {
	u := freshSchema(t, "notify")
	writer, reader := open(t, u), open(t, u)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := reader.Changes(ctx)
	select { // the first signal says "listening; look now"
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("Changes never started listening")
	}
	unlock, err := writer.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = writer.Publish(store.Publication{ManifestID: "00000000000000D4", Version: "v", Branch: "b",
		Files: storetest.Files("00000000000000D4"), Now: time.Now()})
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("no notification after a publish")
	}
	if p, _, err := reader.Active(); err != nil || p.ManifestID != "00000000000000D4" {
		t.Errorf("after the notification Active = %+v, %v", p, err)
	}
	cancel()
	for range ch {
	}
}
