package pipeline_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// TestImportStoresBrotli: with Options.Brotli an import stores the brotli of
// the bodies the version adds to the one it is diffed against, and a server's
// edition of the version takes every stream; a first version, or an import
// without the option, stores none.
func TestImportStoresBrotli(t *testing.T) {
	eachStoredCase(t, func(o *pipeline.Options) { o.Brotli = true }, func(t *testing.T, st *store.Store, rep *pipeline.Report, wantStored bool) {
		blob, err := st.ReadBrotli(rep.ManifestID)
		if !wantStored {
			if !errors.Is(err, store.ErrNotFound) || rep.Brotli != 0 {
				t.Errorf("ReadBrotli: %v, report counts %d; want ErrNotFound and none", err, rep.Brotli)
			}
			return
		}
		if err != nil || rep.Brotli == 0 || rep.BrotliBytes != len(blob) {
			t.Fatalf("ReadBrotli: %d bytes, %v; the report counts %d bodies, %d bytes", len(blob), err, rep.Brotli, rep.BrotliBytes)
		}
		var out strings.Builder
		rep.Write(&out)
		if !strings.Contains(out.String(), "brotli of ") {
			t.Errorf("the report does not say what was stored:\n%s", out.String())
		}
		// What a server swapping from 14 holds: 15's bodies, with gzip,
		// those 14 had with their brotli too.
		_, files, err := st.ReadVersion(rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		ed, err := catalog.BuildFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		bodies := ed.Bodies()
		representation.CompressGzipAll(bodies)
		applied, err := representation.ApplyBrotli(blob, bodies)
		if err != nil || applied < rep.Brotli {
			t.Errorf("applied %d, err %v; the import stored %d", applied, err, rep.Brotli)
		}
		// Each installed stream decodes to its body.
		for _, b := range bodies {
			if br := b.Pick([]string{"br"}); br.Encoding.Name != "" {
				// Decoded by another implementation than the encoder's.
				if got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br.Bytes))); err != nil || !bytes.Equal(got, b.JSON) {
					t.Fatalf("a stored stream does not decode to its body: %v", err)
				}
			}
		}
	})
}

// TestImportStoresPart: with Options.Part an import stores the part a server
// on the version it is diffed against reads instead of building, and that
// server's edition from it is the one it would build; a first version, or an
// import without the option, stores none.
func TestImportStoresPart(t *testing.T) {
	eachStoredCase(t, func(o *pipeline.Options) { o.Part = true }, func(t *testing.T, st *store.Store, rep *pipeline.Report, wantStored bool) {
		part, err := st.ReadPart(rep.ManifestID)
		if !wantStored {
			if !errors.Is(err, store.ErrNotFound) || rep.PartBytes != 0 {
				t.Errorf("ReadPart: %v, report counts %d bytes; want ErrNotFound and none", err, rep.PartBytes)
			}
			return
		}
		if err != nil || rep.PartBytes != len(part) {
			t.Fatalf("ReadPart: %d bytes, %v; the report counts %d", len(part), err, rep.PartBytes)
		}
		var out strings.Builder
		rep.Write(&out)
		if !strings.Contains(out.String(), "the part servers on "+rep.Previous) {
			t.Errorf("the report does not say what was stored:\n%s", out.String())
		}
		// A server on 14 reads 15 from it: the edition it would build.
		_, files14, err := st.ReadVersion(rep.Previous)
		if err != nil {
			t.Fatal(err)
		}
		_, files, err := st.ReadVersion(rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		serving, err := catalog.BuildFiles(files14)
		if err != nil {
			t.Fatal(err)
		}
		representation.CompressGzipAll(serving.Bodies())
		got, err := catalog.ReadStoredPart(part, files, serving)
		if err != nil {
			t.Fatal(err)
		}
		want, err := catalog.BuildFilesReusing(files, serving)
		if err != nil {
			t.Fatal(err)
		}
		representation.Reuse(want.Bodies(), serving.Bodies())
		representation.CompressGzipAll(want.Bodies())
		apitest.SameEdition(t, want, got)
	})
}

// eachStoredCase imports sample version 15 with the option enable sets, after
// 14 and as a store's first version, and without it after 14, and runs check
// on each: wantStored says whether the import should have stored what the
// option asks for (nothing for a first version: there is no previous one).
func eachStoredCase(t *testing.T, enable func(*pipeline.Options), check func(t *testing.T, st *store.Store, rep *pipeline.Report, wantStored bool)) {
	v14, v15 := fixtureDir(t, "14"), fixtureDir(t, "15")
	for _, tc := range []struct {
		name       string
		first, on  bool // 15 is the store's first version; the option is set
		wantStored bool
	}{
		{"after a version", false, true, true},
		{"without the option", false, false, false},
		{"a first version", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t, t.TempDir())
			if !tc.first {
				mustImport(t, st, v14)
			}
			var opt pipeline.Options
			if tc.on {
				enable(&opt)
			}
			rep, err := pipeline.Import(st, v15, opt)
			if err != nil {
				t.Fatal(err)
			}
			check(t, st, rep, tc.wantStored)
		})
	}
}
