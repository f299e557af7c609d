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
)

// TestMain doubles as the publishing child of TestImporterKilledMidTransaction.
func TestMain(m *testing.M) {
	if u := os.Getenv("REFDATA_PG_CHILD"); u != "" {
		os.Exit(child(u))
	}
	os.Exit(m.Run())
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
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "REFDATA_PG_CHILD="+u)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child's session is inside its transaction, then kill it.
		admin, err := pgx.Connect(context.Background(), serverURL(t))
		if err != nil {
			t.Fatal(err)
		}
		inTx := false
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !inTx; {
			var n int
			_ = admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
				WHERE application_name = $1 AND xact_start IS NOT NULL AND query ILIKE '%refdata_contents%'`,
				fmt.Sprintf("refdata pid %d on %s", cmd.Process.Pid, hostname())).Scan(&n)
			inTx = n > 0
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		admin.Close(context.Background())
		if !inTx {
			t.Fatalf("round %d: the child never was inside its transaction (stderr %s)", round, stderr.String())
		}
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
