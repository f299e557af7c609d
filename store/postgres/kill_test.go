package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
)

// TestMain doubles as the publishing child of TestImporterKilledMidTransaction.
func TestMain(m *testing.M) {
	if u := os.Getenv("REFDATA_PG_CHILD"); u != "" {
		os.Exit(child(u))
	}
	os.Exit(storetest.RunInTempDir(m))
}

// bigVersion is a version large enough that its transaction is long: 400
// distinct files of 64 KiB.
func bigVersion(id string) store.Publication {
	files := map[string][]byte{"version.json": []byte(`{"status":200,"data":{"manifestId":"` + id + `"}}`)}
	for i := range 400 {
		files[fmt.Sprintf("en-US/f%03d.json", i)] = fmt.Appendf(bytes.Repeat([]byte{'a' + byte(i%26)}, 64<<10), "%d", i)
	}
	return store.Publication{ManifestID: id, Version: "big", Branch: "b", Files: files, Previous: "00000000000000A1",
		DiffBody: []byte(`{}`), Retain: 1, Now: time.Now()}
}

func child(u string) int {
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	unlock, err := s.Lock(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer unlock()
	if _, err := s.Publish(bigVersion("00000000000000B2")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestImporterKilledMidTransaction: an importer killed with SIGKILL while its
// publish transaction is open leaves nothing visible — the old version active,
// no row of the new one — and its writer lock is released with its session, so
// the next import succeeds.
func TestImporterKilledMidTransaction(t *testing.T) {
	u := freshSchema(t, "kill")
	s := open(t, u)
	first := store.Publication{ManifestID: "00000000000000A1", Version: "small", Branch: "b", Files: map[string][]byte{"version.json": []byte(`{}`)}, Now: time.Now()}
	unlock, err := s.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(first); err != nil {
		t.Fatal(err)
	}
	unlock()
	_, before, _ := s.Active()

	for round := range 3 {
		// The child is killed where its transaction has written the version's
		// rows and waits on the diffs' table, which another session holds
		// locked: a place it stays until killed, so the kill never races its
		// commit (polling for it inside its writes once missed it).
		locker, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := locker.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(context.Background(), "LOCK TABLE refdata_diffs IN SHARE MODE"); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "REFDATA_PG_CHILD="+u)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Another session watches: in the locker's transaction
		// pg_stat_activity would read as it was at its first query.
		admin, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		waiting := false
		deadline := time.After(2 * time.Minute)
		tick := time.NewTicker(10 * time.Millisecond)
		for !waiting {
			select {
			case err := <-exited:
				t.Fatalf("round %d: the child ended (%v) before it waited inside its transaction (stderr %s)", round, err, stderr.String())
			case <-deadline:
				_ = cmd.Process.Kill()
				t.Fatalf("round %d: the child did not wait on the diffs' table within two minutes", round)
			case <-tick.C:
			}
			var n int
			if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
				WHERE application_name = $1 AND xact_start IS NOT NULL AND wait_event_type = 'Lock' AND query ILIKE '%refdata_diffs%'`,
				fmt.Sprintf("refdata pid %d on %s", cmd.Process.Pid, hostname())).Scan(&n); err != nil {
				_ = cmd.Process.Kill()
				t.Fatal(err)
			}
			waiting = n > 0
		}
		tick.Stop()
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		_ = tx.Rollback(context.Background())
		locker.Close(context.Background())
		admin.Close(context.Background())
		p, after, err := s.Active()
		if err != nil || p.ManifestID != first.ManifestID || !bytes.Equal(before, after) {
			t.Fatalf("round %d: after the kill the pointer is %+v, %v", round, p, err)
		}
		if _, err := s.Lookup("00000000000000B2"); err == nil {
			t.Fatalf("round %d: the killed publish's version is visible", round)
		}
		if _, _, err := s.ReadVersion(first.ManifestID); err != nil {
			t.Fatalf("round %d: the old version does not read: %v", round, err)
		}
	}
	// The lock died with the session: the next publish goes through.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unlock, err = s.Lock(ctx)
	if err != nil {
		t.Fatalf("the killed importer's lock outlived it: %v", err)
	}
	defer unlock()
	if _, err := s.Publish(bigVersion("00000000000000B2")); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := s.Active(); p.ManifestID != "00000000000000B2" {
		t.Errorf("after a clean publish the active version is %s", p.ManifestID)
	}
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
