// Package postgres is a store.Backend in one PostgreSQL database, for many
// replicas sharing one store: a publish is one transaction followed by a NOTIFY
// that replicas LISTEN for. The schema is migrated at Open from the embedded
// SQL files, each applied once, in order.
package postgres

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Channel is the NOTIFY channel a publish signals on.
const Channel = "refdata_active"

// lockClass is the first key of the writer's advisory lock (the second is the
// schema's hash), so refdata's lock never collides with an application's.
const lockClass = 0x52454644 // "REFD"

// Store is one store in one PostgreSQL schema.
type Store struct {
	pool    *pgxpool.Pool
	cfg     *pgx.ConnConfig // for LISTEN's own connection
	schema  string
	lockKey int32

	// migrated: refdata's tables exist and are current. OpenLazy leaves a
	// schema without them as it is until the first write (ensure).
	mu       sync.Mutex
	migrated bool

	// StageBound is how long a publish waits for the live replicas to stage
	// the new version before it schedules the switch anyway.
	StageBound time.Duration
	// Margin is how far ahead the switch is scheduled once every replica has
	// staged, so the NOTIFY carrying the instant reaches all of them before it.
	Margin time.Duration
	// ReplicaTTL: a replica whose last heartbeat is older is not waited for.
	ReplicaTTL time.Duration
	// CacheDir is where a replica keeps the segments it serves from (Segment);
	// "" is a directory per store (server, database, schema) in the system's
	// temporary directory.
	CacheDir string

	fetching sync.Map // segment sum → *sync.Mutex: one fetch at a time
	checked  sync.Map // segment sum → true: the cached copy passed its check
}

// Defaults for Store's coordination settings.
const (
	DefaultStageBound = 2 * time.Minute
	DefaultMargin     = time.Second
	DefaultReplicaTTL = 10 * time.Second
)

var (
	_ store.Backend     = (*Store)(nil)
	_ store.Notifier    = (*Store)(nil)
	_ store.Coordinator = (*Store)(nil)
)

// Open connects to url (a postgres:// URL or key=value DSN; search_path picks
// the schema), applies pending migrations and returns the store.
func Open(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, true)
}

// OpenLazy is Open for a writer that may store nothing (an import, a sync): a
// schema without refdata's tables is left as it is, read as an empty store,
// until the first write creates them, so a rejected import or a failed first
// sync leaves the database as it found it. A schema that has them is migrated
// at once, as Open does.
func OpenLazy(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, false)
}

func open(ctx context.Context, url string, create bool) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: parse URL: %w", err)
	}
	host, _ := os.Hostname()
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = fmt.Sprintf("refdata pid %d on %s", os.Getpid(), host)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{pool: pool, cfg: cfg.ConnConfig, StageBound: DefaultStageBound, Margin: DefaultMargin, ReplicaTTL: DefaultReplicaTTL}
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&s.schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: connect: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(s.schema))
	s.lockKey = int32(h.Sum32())
	exists := create
	if !exists {
		if exists, err = s.Exists(); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if exists {
		if err := s.ensure(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// Exists reports whether refdata's tables exist in the schema.
func (s *Store) Exists() (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(context.Background(), "SELECT to_regclass('refdata_schema_migrations') IS NOT NULL").Scan(&ok); err != nil {
		return false, fmt.Errorf("postgres store: %w", err)
	}
	return ok, nil
}

// ensure applies the migrations once per Store, before its first write.
func (s *Store) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.migrated {
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.migrated = true
	return nil
}

// absent: a read met a schema without refdata's tables (OpenLazy), which
// reads as an empty store.
func absent(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01" // undefined_table
}

// Close releases the connections.
func (s *Store) Close() { s.pool.Close() }

// migrate applies the embedded migrations not yet applied, each in its own
// transaction, under a transaction-scoped advisory lock so replicas starting
// together migrate once.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("postgres store: migration %s has no number", base)
		}
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, $2)", lockClass, s.lockKey+1); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS refdata_schema_migrations (
				version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, "SELECT exists(SELECT 1 FROM refdata_schema_migrations WHERE version = $1)", n).Scan(&done); err != nil || done {
				return err
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO refdata_schema_migrations (version, name) VALUES ($1, $2)", n, base)
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres store: migration %s: %w", base, err)
		}
	}
	return nil
}

// Lock takes the writer lock: a session advisory lock held on one connection
// of the pool until unlock. A writer that dies releases it with its session.
func (s *Store) Lock(ctx context.Context) (func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock store: %w", errOrCause(ctx, err))
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", lockClass, s.lockKey); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock store: %w", errOrCause(ctx, err))
	}
	return s.unlocker(conn), nil
}

// TryLock takes the writer lock if it is free.
func (s *Store) TryLock() (func(), bool) {
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false
	}
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", lockClass, s.lockKey).Scan(&ok); err != nil || !ok {
		conn.Release()
		return nil, false
	}
	return s.unlocker(conn), true
}

func (s *Store) unlocker(conn *pgxpool.Conn) func() {
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", lockClass, s.lockKey); err != nil {
			// The session may still hold the lock: do not give it back to the pool.
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}
}

// errOrCause prefers the context's cause when the context ended: a query
// cancelled by it reports only that it was cancelled.
func errOrCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// LockHolder names the session holding the writer lock: its application name
// (refdata sets "refdata pid N on HOST"), address and how long it has held it.
func (s *Store) LockHolder() string {
	var app, addr string
	var since time.Time
	err := s.pool.QueryRow(context.Background(), `
		SELECT a.application_name, coalesce(host(a.client_addr), 'local'), coalesce(a.xact_start, a.backend_start)
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid AND l.objid = $2::oid AND l.objsubid = 2`,
		uint32(lockClass), uint32(s.lockKey)).Scan(&app, &addr, &since)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s (%s) since %s", app, addr, since.UTC().Format(time.RFC3339))
}

// Lookup finds a stored version by manifest ID in any letter case. The input
// is only compared, as a query parameter, with the stored IDs.
func (s *Store) Lookup(id string) (string, error) {
	var got string
	err := s.pool.QueryRow(context.Background(), "SELECT manifest_id FROM refdata_versions WHERE upper(manifest_id) = upper($1)", id).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) || absent(err) {
		return "", fmt.Errorf("version %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("look up version: %w", err)
	}
	return got, nil
}

// Versions lists the stored versions, oldest first.
func (s *Store) Versions() ([]store.Manifest, error) {
	rows, err := s.pool.Query(context.Background(), "SELECT manifest_id, manifest FROM refdata_versions ORDER BY seq")
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	defer rows.Close()
	var out []store.Manifest
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("list versions: %w", err)
		}
		var m store.Manifest
		if json.Unmarshal(raw, &m) != nil || m.ManifestID != id {
			continue // as the file store: a version whose manifest does not parse is not listed
		}
		out = append(out, m)
	}
	if err := rows.Err(); absent(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	return out, nil
}

// manifest reads a stored version's manifest and its checksum.
func (s *Store) manifest(ctx context.Context, q querier, id string) (store.Manifest, string, error) {
	var raw []byte
	if err := q.QueryRow(ctx, "SELECT manifest FROM refdata_versions WHERE manifest_id = $1", id).Scan(&raw); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return store.Manifest{}, "", fmt.Errorf("version %s: %w", id, store.ErrNotFound)
		}
		return store.Manifest{}, "", fmt.Errorf("read manifest of %s: %w", id, err)
	}
	m, err := parseManifest(raw)
	if err != nil {
		return m, "", fmt.Errorf("manifest of %s: %w", id, err)
	}
	if m.ManifestID != id {
		return m, "", fmt.Errorf("manifest of %s names version %q: %w", id, m.ManifestID, store.ErrCorrupt)
	}
	return m, store.Sum(raw), nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// deleteDiffs deletes the diffs naming version $1.
const deleteDiffs = "DELETE FROM refdata_diffs WHERE from_id = $1 OR to_id = $1"

// writeDiff stores the diff from → to, replacing one stored before.
func writeDiff(ctx context.Context, q querier, from, to string, body []byte) error {
	_, err := q.Exec(ctx, `INSERT INTO refdata_diffs (from_id, to_id, sha256, body) VALUES ($1, $2, $3, $4)
		ON CONFLICT (from_id, to_id) DO UPDATE SET sha256 = excluded.sha256, body = excluded.body`, from, to, store.Sum(body), body)
	return err
}

// setActive moves the active pointer to p, the switch at activateAt (nil: at
// once), and counts one more revision. The pointer it replaces names p's
// Previous and that one's own (kept as previous_before) when p follows it, or
// p itself when p replaces it (import --force): previous_before stays.
func setActive(ctx context.Context, tx pgx.Tx, p store.Pointer, activateAt *time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO refdata_active (one, manifest_id, previous, manifest_sha256, published_at, revision, activate_at, activated)
		VALUES (true, $1, $2, $3, $4, 1, $5, $6)
		ON CONFLICT (one) DO UPDATE SET manifest_id = excluded.manifest_id, previous = excluded.previous,
			manifest_sha256 = excluded.manifest_sha256, published_at = excluded.published_at,
			activate_at = excluded.activate_at, activated = excluded.activated, revision = refdata_active.revision + 1,
			previous_before = CASE
				WHEN refdata_active.manifest_id = excluded.manifest_id THEN refdata_active.previous_before
				WHEN refdata_active.manifest_id = excluded.previous THEN refdata_active.previous
				ELSE '' END`,
		p.ManifestID, p.Previous, p.ManifestSHA256, p.PublishedAt, activateAt, p.Activated)
	return err
}

// ReadVersion reads every file of a version in one snapshot of the database
// and checks each against the manifest.
func (s *Store) ReadVersion(id string) (store.Manifest, map[string][]byte, error) {
	return s.Verify(id, "")
}

// Verify is ReadVersion with the manifest checked against a manifest
// checksum, when given.
func (s *Store) Verify(id, manifestSHA string) (store.Manifest, map[string][]byte, error) {
	files := map[string][]byte{}
	id, m, err := s.snapshot(id, manifestSHA, func(ctx context.Context, tx pgx.Tx, id string) error {
		if m, _, err := s.manifest(ctx, tx, id); err == nil && m.Contents {
			if err := readContents(ctx, tx, m, files); err != nil {
				return fmt.Errorf("read version %s: %w", id, err)
			}
			return nil
		}
		rows, err := tx.Query(ctx, "SELECT name, body FROM refdata_files WHERE manifest_id = $1", id)
		var name string
		var body []byte
		if err == nil {
			_, err = pgx.ForEachRow(rows, []any{&name, &body}, func() error { files[name] = body; return nil })
		}
		if err != nil {
			return fmt.Errorf("read version %s: %w", id, err)
		}
		return nil
	})
	if err == nil {
		err = store.CheckFiles(id, m, files)
	}
	if err != nil {
		return m, nil, err
	}
	return m, files, nil
}

// snapshot finds version id and reads its manifest, checked against
// manifestSHA when not "", then calls read with the ID as stored in the same
// read-only snapshot of the database.
func (s *Store) snapshot(id, manifestSHA string, read func(ctx context.Context, tx pgx.Tx, id string) error) (string, store.Manifest, error) {
	ctx := context.Background()
	id, err := s.Lookup(id)
	if err != nil {
		return "", store.Manifest{}, err
	}
	var m store.Manifest
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var got string
		var err error
		if m, got, err = s.manifest(ctx, tx, id); err != nil {
			return err
		}
		if err := store.CheckManifest(id, got, manifestSHA); err != nil {
			return err
		}
		return read(ctx, tx, id)
	})
	return id, m, err
}

// Active reads the active pointer; the revision is a counter every publish
// increments, with the manifest ID.
func (s *Store) Active() (store.Pointer, []byte, error) {
	var p store.Pointer
	var rev int64
	var at *time.Time
	err := s.pool.QueryRow(context.Background(), "SELECT manifest_id, previous, previous_before, manifest_sha256, published_at, revision, activate_at, activated FROM refdata_active").
		Scan(&p.ManifestID, &p.Previous, &p.PreviousBefore, &p.ManifestSHA256, &p.PublishedAt, &rev, &at, &p.Activated)
	if at != nil {
		p.ActivateAt = at.UTC()
	}
	if errors.Is(err, pgx.ErrNoRows) || absent(err) {
		return store.Pointer{}, nil, fmt.Errorf("active pointer: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Pointer{}, nil, fmt.Errorf("read active pointer: %w", err)
	}
	p.PublishedAt = p.PublishedAt.UTC()
	return p, []byte(strconv.FormatInt(rev, 10) + " " + p.ManifestID), nil
}

// ReadIndex reads a version's manifest and edition index (for a version
// stored before, its pack) in one snapshot of the database.
func (s *Store) ReadIndex(id, manifestSHA string) (store.Manifest, []byte, error) {
	var body []byte
	id, m, err := s.snapshot(id, manifestSHA, func(ctx context.Context, tx pgx.Tx, id string) error {
		if m, _, err := s.manifest(ctx, tx, id); err == nil && m.Index != "" {
			var err error
			if body, err = readIndex(ctx, tx, id); err != nil {
				return fmt.Errorf("read index of %s: %w", id, err)
			}
			return nil
		}
		err := tx.QueryRow(ctx, "SELECT body FROM refdata_extras WHERE manifest_id = $1 AND kind = 'edition'", id).Scan(&body)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) { // no rows: body stays nil, none stored
			return fmt.Errorf("read edition of %s: %w", id, err)
		}
		return nil
	})
	if err == nil {
		err = store.CheckIndex(id, m, body)
	}
	if err != nil {
		return m, nil, err
	}
	return m, body, nil
}

// ReadDiff reads a stored diff and verifies its checksum.
func (s *Store) ReadDiff(from, to string) ([]byte, error) {
	f, t, err := store.LookupBoth(s, from, to)
	if err != nil {
		return nil, err
	}
	var want string
	var body []byte
	err = s.pool.QueryRow(context.Background(), "SELECT sha256, body FROM refdata_diffs WHERE from_id = $1 AND to_id = $2", f, t).Scan(&want, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("diff %s → %s: %w", f, t, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read diff %s → %s: %w", f, t, err)
	}
	if store.Sum(body) != want || !json.Valid(body) {
		return nil, fmt.Errorf("diff %s → %s fails its checksum: %w", f, t, store.ErrCorrupt)
	}
	return body, nil
}

// WriteDiff stores a diff computed on demand.
func (s *Store) WriteDiff(from, to string, body []byte) error {
	f, t, err := store.LookupBoth(s, from, to)
	if err != nil {
		return err
	}
	if err := s.ensure(context.Background()); err != nil {
		return err
	}
	if err := writeDiff(context.Background(), s.pool, f, t, body); err != nil {
		return fmt.Errorf("write diff %s → %s: %w", f, t, err)
	}
	return nil
}

// Publish stores the version and the diff, moves the pointer and prunes in one
// transaction, whose NOTIFY reaches the replicas only if it commits.
func (s *Store) Publish(p store.Publication) ([]string, error) {
	if _, err := p.Names(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	var pruned []string
	var replicas int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.lockContents(ctx, tx); err != nil {
			return err
		}
		if err := awaitSwitch(ctx, tx); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT exists(SELECT 1 FROM refdata_versions WHERE upper(manifest_id) = $1)", p.ManifestID).Scan(&exists); err != nil {
			return err
		}
		if exists && !p.Replace {
			return fmt.Errorf("version %s is already stored", p.ManifestID)
		}
		if exists { // import --force: the new files take the old ones' place
			for _, q := range []string{deleteDiffs, "DELETE FROM refdata_files WHERE manifest_id = $1", "DELETE FROM refdata_extras WHERE manifest_id = $1", "DELETE FROM refdata_index_parts WHERE manifest_id = $1"} {
				if _, err := tx.Exec(ctx, q, p.ManifestID); err != nil {
					return err
				}
			}
		}
		var seq int64
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM refdata_versions").Scan(&seq); err != nil {
			return err
		}
		m, mb, err := p.Manifest(seq)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO refdata_versions (manifest_id, seq, version, branch, published_at, manifest, manifest_sha256)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (manifest_id) DO UPDATE SET seq = excluded.seq, version = excluded.version, branch = excluded.branch,
				published_at = excluded.published_at, manifest = excluded.manifest, manifest_sha256 = excluded.manifest_sha256`,
			p.ManifestID, seq, p.Version, p.Branch, m.PublishedAt, mb, store.Sum(mb)); err != nil {
			return err
		}
		if err := putContents(ctx, tx, m.Files, p.Files); err != nil {
			return fmt.Errorf("files: %w", err)
		}
		if err := putSegment(ctx, tx, p.Segment); err != nil {
			return err
		}
		if m.Contents {
			if err := checkNamed(ctx, tx, m); err != nil {
				return err
			}
		}
		if err := putIndex(ctx, tx, p.ManifestID, p.Index); err != nil {
			return err
		}
		if p.Previous != "" && p.DiffBody != nil {
			if !catalog.IsManifestID(p.Previous) {
				return fmt.Errorf("bad previous version %q", p.Previous)
			}
			if err := writeDiff(ctx, tx, p.Previous, p.ManifestID, p.DiffBody); err != nil {
				return fmt.Errorf("diff: %w", err)
			}
		}
		// With live replicas the switch is scheduled at the stage deadline (and
		// moved earlier once they have all staged); without any it is immediate.
		// A replica serving nothing (its first load failed) has nothing to
		// switch and is not ready: it is not waited for.
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM refdata_replicas WHERE seen_at > now() - $1::interval AND serving <> ''", s.ReplicaTTL).Scan(&replicas); err != nil {
			return fmt.Errorf("replicas: %w", err)
		}
		var activateAt *time.Time
		if replicas > 0 {
			at := time.Now().Add(s.StageBound)
			activateAt = &at
		}
		ptr := store.Pointer{ManifestID: p.ManifestID, Previous: p.Previous, ManifestSHA256: store.Sum(mb), PublishedAt: m.PublishedAt}
		if err := setActive(ctx, tx, ptr, activateAt); err != nil {
			return fmt.Errorf("active pointer: %w", err)
		}
		if pruned, err = prune(ctx, tx, p.Retain, p.ManifestID); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		if err := s.sweep(ctx, tx); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, p.ManifestID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", p.ManifestID, err)
	}
	if replicas > 0 {
		if err := s.schedule(ctx, p.ManifestID); err != nil {
			// Published all the same: the replicas switch at the deadline.
			return pruned, fmt.Errorf("publish %s: schedule the switch: %w", p.ManifestID, err)
		}
	}
	return pruned, nil
}

// awaitSwitch locks the active pointer for tx and, when it schedules a switch
// still ahead, waits for that instant: a pointer is never replaced before its
// switch, so a version the pointer has moved past is one every replica serves
// (or has been told to).
func awaitSwitch(ctx context.Context, tx pgx.Tx) error {
	var at *time.Time
	err := tx.QueryRow(ctx, "SELECT activate_at FROM refdata_active FOR UPDATE").Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (at == nil || !time.Now().Before(*at))) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("active pointer: %w", err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(*at)):
		return nil
	}
}

// schedule waits, up to StageBound, until every live replica serving a
// version has staged (or serves) id, then moves the switch to now + Margin
// and notifies.
func (s *Store) schedule(ctx context.Context, id string) error {
	deadline := time.Now().Add(s.StageBound)
	for time.Now().Before(deadline) {
		var waiting int
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM refdata_replicas
			WHERE seen_at > now() - $1::interval AND staged <> $2 AND serving <> $2 AND serving <> ''`, s.ReplicaTTL, id).Scan(&waiting)
		if err != nil {
			return err
		}
		if waiting == 0 {
			_, err := s.pool.Exec(ctx, `UPDATE refdata_active SET activate_at = $2, revision = revision + 1
				WHERE manifest_id = $1 AND activate_at > $2`, id, time.Now().Add(s.Margin))
			if err == nil {
				_, err = s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, id)
			}
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Heartbeat records that a replica is alive, what it serves and what it has
// staged.
func (s *Store) Heartbeat(replica, serving, staged string) error {
	if err := s.ensure(context.Background()); err != nil {
		return err
	}
	_, err := s.pool.Exec(context.Background(), `INSERT INTO refdata_replicas (id, serving, staged, seen_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (id) DO UPDATE SET serving = excluded.serving, staged = excluded.staged, seen_at = now()`, replica, serving, staged)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// Forget removes a replica's record (it shuts down), so publishes stop
// waiting for it.
func (s *Store) Forget(replica string) error {
	if err := s.ensure(context.Background()); err != nil {
		return err
	}
	_, err := s.pool.Exec(context.Background(), "DELETE FROM refdata_replicas WHERE id = $1", replica)
	return err
}

// prune keeps the newest retain versions (and the active one) and the diffs
// between kept versions.
func prune(ctx context.Context, tx pgx.Tx, retain int, active string) ([]string, error) {
	if retain < 1 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `DELETE FROM refdata_versions WHERE manifest_id <> $1 AND manifest_id NOT IN
		(SELECT manifest_id FROM refdata_versions ORDER BY seq DESC LIMIT $2) RETURNING manifest_id`, active, retain)
	if err != nil {
		return nil, err
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(gone) == 0 {
		return nil, err
	}
	sort.Strings(gone)
	_, err = tx.Exec(ctx, "DELETE FROM refdata_diffs WHERE from_id = ANY($1) OR to_id = ANY($1)", gone)
	return gone, err
}

// Changes fires when a publish commits, over a connection of its own that
// LISTENs; when it drops it reconnects (with backoff) and fires once, since a
// publish may have been missed meanwhile.
func (s *Store) Changes(ctx context.Context) <-chan struct{} {
	return store.Signals(func(fire func()) {
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			conn, err := pgx.ConnectConfig(ctx, s.cfg.Copy())
			if err == nil {
				if _, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err == nil {
					backoff = 100 * time.Millisecond
					fire() // anything published while we were not listening
					for err == nil {
						if _, err = conn.WaitForNotification(ctx); err == nil {
							fire()
						}
					}
				}
				_ = conn.Close(context.Background())
			}
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	})
}

// Discard removes a stored version that is not active, with its files and the
// diffs naming it.
func (s *Store) Discard(id string) error {
	id, err := s.Lookup(id)
	if err != nil {
		return err
	}
	ctx := context.Background()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var active bool
		if err := tx.QueryRow(ctx, "SELECT exists(SELECT 1 FROM refdata_active WHERE manifest_id = $1)", id).Scan(&active); err != nil {
			return fmt.Errorf("discard %s: %w", id, err)
		}
		if active {
			return fmt.Errorf("discard %s: it is the active version", id)
		}
		for _, q := range []string{deleteDiffs, "DELETE FROM refdata_versions WHERE manifest_id = $1"} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return fmt.Errorf("discard %s: %w", id, err)
			}
		}
		return s.sweep(ctx, tx)
	})
}

// Location names the database and schema, without credentials.
func (s *Store) Location() string {
	return fmt.Sprintf("postgres://%s:%d/%s (schema %s)", s.cfg.Host, s.cfg.Port, s.cfg.Database, s.schema)
}

// Activate makes a retained version the active one in one transaction;
// replicas switch at once (an operator's rollback is not staged).
func (s *Store) Activate(id string, diffBody []byte, now time.Time) (store.Pointer, error) {
	id, err := s.Lookup(id)
	if err != nil {
		return store.Pointer{}, err
	}
	if _, _, err := s.Verify(id, ""); err != nil {
		return store.Pointer{}, err
	}
	ctx := context.Background()
	var ptr store.Pointer
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		m, msum, err := s.manifest(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := awaitSwitch(ctx, tx); err != nil {
			return err
		}
		ptr = store.Pointer{ManifestID: id, ManifestSHA256: msum, PublishedAt: m.PublishedAt, Activated: true}
		var cur, prev string
		var activated bool
		err = tx.QueryRow(ctx, "SELECT manifest_id, previous, activated FROM refdata_active FOR UPDATE").Scan(&cur, &prev, &activated)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case cur == id:
			ptr.Previous, ptr.Activated = prev, activated // already active: the pointer stays as it is
		default:
			ptr.Previous = cur
			if diffBody != nil {
				if err := writeDiff(ctx, tx, cur, id, diffBody); err != nil {
					return err
				}
			}
		}
		if err := setActive(ctx, tx, ptr, nil); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, id)
		return err
	})
	if err != nil {
		return store.Pointer{}, fmt.Errorf("activate %s: %w", id, err)
	}
	return ptr, nil
}

// SyncState returns what sync last recorded; nil when nothing.
func (s *Store) SyncState() ([]byte, error) {
	var b []byte
	err := s.pool.QueryRow(context.Background(), "SELECT state FROM refdata_sync_state").Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) || absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sync state: %w", err)
	}
	return b, nil
}

// WriteSyncState replaces the sync state.
func (s *Store) WriteSyncState(b []byte) error {
	if err := s.ensure(context.Background()); err != nil {
		return err
	}
	_, err := s.pool.Exec(context.Background(), `INSERT INTO refdata_sync_state (one, state) VALUES (true, $1)
		ON CONFLICT (one) DO UPDATE SET state = excluded.state`, b)
	if err != nil {
		return fmt.Errorf("write sync state: %w", err)
	}
	return nil
}

// parseManifest reads a stored manifest's JSON.
func parseManifest(raw []byte) (store.Manifest, error) {
	var m store.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%w: %w", store.ErrCorrupt, err)
	}
	return m, nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
