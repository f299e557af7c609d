package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// PostgresURL is the cluster the tests use: REFDATA_TEST_POSTGRES, which `make
// test` sets when `make pg-start` (tools/pg.sh) has one running. Without it the
// tests skip, unless REFDATA_REQUIRE_POSTGRES=1 (CI), where skipping fails.
func PostgresURL(t *testing.T) string {
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

// PostgresSchema creates an empty schema and returns a URL whose search_path is it:
// every test store is independent within one database.
func PostgresSchema(t *testing.T, name string) string {
	t.Helper()
	base := PostgresURL(t)
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

// RunInTempDir runs a test binary's tests with TMPDIR a directory of their
// own, removed when they end: what they make in the temporary directory, and
// what a store makes there by default (a PostgreSQL replica's segment cache,
// named for its schema), goes with it.
func RunInTempDir(m *testing.M) int {
	dir, err := os.MkdirTemp("", "refdata-test-")
	if err == nil {
		// As the system's temporary directory is: a test's own PostgreSQL
		// cluster (tools/pg.sh) runs as the postgres user, in a directory here.
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		panic(err)
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	return code
}
