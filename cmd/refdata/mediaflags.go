package main

import (
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/upstream"
)

// DefaultMediaMaxBytes caps one mirrored file: the largest real videos are a
// few MiB, and a sync holds at most --concurrency of them in memory at once.
const DefaultMediaMaxBytes = 32 << 20

// mediaFlags are the media mirror's flags: where it is, whether a sync
// fetches into it, and the public URL the bodies point to it by.
type mediaFlags struct {
	fetch    bool
	dir      string
	maxBytes int64
	public   string
	hosts    listFlag
}

// register adds --media-dir and --public-media-url, and with fetch (sync,
// serve) --media, --media-max-bytes and --media-host.
func (mf *mediaFlags) register(fs *flag.FlagSet, fetch bool) {
	if fetch {
		fs.BoolVar(&mf.fetch, "media", false, "also mirror every image and video the catalogs reference (before importing the version)")
		fs.Int64Var(&mf.maxBytes, "media-max-bytes", DefaultMediaMaxBytes, "largest media file mirrored; a larger one is skipped")
		fs.Var(&mf.hosts, "media-host", "also fetch media from this `host` or host:port, whatever its address (repeatable, or comma-separated); "+
			"by default only from the upstream's host and media.<its host> (docs/operations.md, Security)")
	}
	fs.StringVar(&mf.dir, "media-dir", "", "the media mirror's directory (default DATA/media for a directory store; needed with a database)")
	fs.StringVar(&mf.public, "public-media-url", "", "the URL this mirror's /media is public at, e.g. https://refdata.example.org: bodies point there for every file it holds")
}

// path is the mirror's directory for store spec data, "" when there is none.
func (mf *mediaFlags) path(data string) string {
	if mf.dir != "" || data == "" || isDatabase(data) {
		return mf.dir
	}
	return filepath.Join(data, "media")
}

func (mf *mediaFlags) check(data string) error {
	if (mf.fetch || mf.public != "") && mf.path(data) == "" {
		return usagef("--media and --public-media-url need a media directory: --media-dir DIR (a database store keeps its media beside it)")
	}
	if len(mf.hosts.values) > 0 && !mf.fetch {
		return usagef("--media-host names hosts --media fetches from: add --media")
	}
	if _, err := upstream.NewHostPolicy("https://upstream.invalid", mf.hosts.values); err != nil {
		return usagef("--media-host: %v", err)
	}
	if mf.public != "" {
		u, err := url.Parse(mf.public)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return usagef("--public-media-url %q: want an http or https URL with no query", mf.public)
		}
	}
	return nil
}

// open opens the mirror: nil when none is configured, or none exists yet and
// nothing is to be fetched or pointed to (a server then serves no /media).
func (mf *mediaFlags) open(data string) (*media.Dir, error) {
	p := mf.path(data)
	if p == "" {
		return nil, nil
	}
	if _, err := os.Stat(p); err != nil && !mf.fetch && mf.public == "" && mf.dir == "" {
		return nil, nil
	}
	return media.OpenDir(p)
}

// rewrite is pipeline.Options.MediaURL for --public-media-url.
func (mf *mediaFlags) rewrite(lib *media.Dir) func(string) (string, bool) {
	if mf.public == "" || lib == nil {
		return nil
	}
	base := strings.TrimRight(mf.public, "/")
	return func(u string) (string, bool) {
		f, ok := lib.Lookup(u)
		return base + f.Path(), ok
	}
}
