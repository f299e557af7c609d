package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// TestUpgradeInPlace: a schema an older refdata wrote (its migrations up to
// 006: every version's files as rows, its edition as one pack) upgrades in
// place when this code opens it: the version still reads, files and pack,
// and serves; the next publish writes the new layout beside it, and the old
// version leaves by retention, its rows with it.
func TestUpgradeInPlace(t *testing.T) {
	t.Parallel()
	u := freshSchema(t, "legacy")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The schema as the older refdata left it.
	if _, err := conn.Exec(ctx, `CREATE TABLE refdata_schema_migrations (
		version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		n, _ := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if n > 6 {
			continue
		}
		sql, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO refdata_schema_migrations (version, name) VALUES ($1, $2)", n, base); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := os.ReadFile("../../edition/testdata/tiny15.pack")
	if err != nil {
		t.Fatal(err)
	}
	old, err := edition.DecodePack(pack)
	if err != nil {
		t.Fatal(err)
	}
	id := old.ManifestID
	files := storetest.Files(id)
	m := store.Manifest{ManifestID: id, Version: "old", Branch: "b", Seq: 1, PublishedAt: time.Now().UTC().Truncate(time.Second),
		Files: map[string]string{}, Edition: store.PackSum(pack)}
	for name, b := range files {
		m.Files[name] = store.Sum(b)
	}
	mb, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO refdata_versions (manifest_id, seq, version, branch, published_at, manifest, manifest_sha256)
		VALUES ($1, 1, 'old', 'b', $2, $3, $4)`, id, m.PublishedAt, mb, store.Sum(mb)); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if _, err := conn.Exec(ctx, "INSERT INTO refdata_files (manifest_id, name, sha256, body) VALUES ($1, $2, $3, $4)", id, name, store.Sum(b), b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "INSERT INTO refdata_extras (manifest_id, kind, sha256, body) VALUES ($1, 'edition', $2, $3)", id, m.Edition, pack); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO refdata_active (one, manifest_id, previous, manifest_sha256, published_at, revision)
		VALUES (true, $1, '', $2, $3, 1)`, id, store.Sum(mb), m.PublishedAt); err != nil {
		t.Fatal(err)
	}

	// This code opens it: migrated, and the old version reads.
	st := open(t, u)
	st.CacheDir = t.TempDir()
	if _, got, err := st.ReadVersion(id); err != nil || len(got) != len(files) {
		t.Fatalf("the old version's files: %d, %v", len(got), err)
	}
	_, b, err := st.ReadIndex(id, store.Sum(mb))
	if err != nil || !bytes.Equal(b, pack) {
		t.Fatalf("the old version's edition: %d bytes, %v; want its pack", len(b), err)
	}
	ed, err := edition.Decode(b, func(sum string, size int64) (*blob.Segment, error) { return st.Segment(sum, size, nil) })
	if err != nil || ed.ManifestID != id {
		t.Fatalf("decoding the old pack: %v", err)
	}
	// The next publish writes the new layout; retention removes the old one.
	const next = "00000000000000B2"
	unlock, err := st.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seg := func() *blob.Finished {
		w, _ := blob.NewWriter("")
		_, _ = w.Append([]byte("a body"))
		f, _ := w.Finish()
		return &f
	}()
	_, err = st.Publish(store.Publication{ManifestID: next, Version: "new", Branch: "b", Files: storetest.Files(next),
		Index: []byte("an index"), Segments: []string{seg.Sum}, Segment: seg, Retain: 1, Now: time.Now()})
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Lookup(id); err == nil {
		t.Error("the old version is still stored after retention")
	}
	for _, table := range []string{"refdata_files", "refdata_extras"} {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows left (%v), want the old version's gone with it", table, n, err)
		}
	}
	if _, got, err := st.ReadVersion(next); err != nil || len(got) != len(storetest.Files(next)) {
		t.Errorf("the new version's files: %d, %v", len(got), err)
	}
}
