package representation

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	brotli "github.com/molecule-man/go-brrr"
)

// Brotli made once, at import, for every replica: an import compresses the
// bodies a version adds (MarshalBrotli) and stores them beside the version,
// and a replica that swaps to it installs them (ApplyBrotli) instead of
// compressing each itself, which was most of what a swap cost it after it
// serves (BENCHMARKS.md § Stop 42).
//
// Each stream is checked where it is made: MarshalBrotli writes only streams
// that decode to their body's bytes. Where it is used, the store checks the
// blob against its checksum, and ApplyBrotli gives a stream only to the body
// whose ETag (a hash of its bytes) it was written under. Decoding again there
// would cost a replica 160 ms on serving's proc for an 18-locale version's
// 66 MB (a twentieth of compressing them), and it raised the p99 over a swap
// about four-fold (BENCHMARKS.md § Stop 42).
//
// The format is this package's own: a magic line, then for each body its ETag
// and its brotli bytes, each prefixed by a big-endian 32-bit length. Written by
// hand because it is two fields; a reader takes each length from what is left
// of the blob, so a broken blob is refused, never read past.

const brotliMagic = "refdata-brotli-1\n"

// MarshalBrotli compresses bodies with brotli, as Compress would at the
// process's Effort but without their gzip, on every core (an import's, not a
// server's), and encodes the streams for ApplyBrotli: each named by its body's
// ETag, which hashes the body's bytes. It returns how many streams it holds
// (bodies too small to gain from brotli have none) and how many it left out
// for not decoding to their body: those bodies are compressed where they are
// served.
func MarshalBrotli(bodies []*Body) (blob []byte, n, bad int) {
	streams := make([][]byte, len(bodies))
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			z := compressorFor(*effort.Load())
			defer z.release()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				body := bodies[i].JSON
				if len(body) < minCompress {
					continue
				}
				br := brotliOf(z, body)
				switch {
				case br == nil || len(br) >= len(body): // served without brotli
				case !decodesTo(br, body):
					refused.Add(1)
				default:
					streams[i] = br
				}
			}
		})
	}
	wg.Wait()
	blob = []byte(brotliMagic)
	for i, br := range streams {
		if br == nil {
			continue
		}
		etag := bodies[i].ETag()
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(etag)))
		blob = append(blob, etag...)
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(br)))
		blob = append(blob, br...)
		n++
	}
	return blob, n, int(refused.Load())
}

// brotliOf is the compressor's brotli; a variable so a test can make it wrong.
var brotliOf = (*compressor).brotli

// ErrBadBrotli wraps every error of a blob ApplyBrotli cannot read.
var ErrBadBrotli = errors.New("stored brotli")

// ApplyBrotli gives the bodies of bodies that have their gzip and lack their
// brotli (a swap's, after CompressGzipAll) the brotli blob holds for their
// ETag, and returns how many got theirs. A blob that does not parse is
// refused whole (an error wrapping ErrBadBrotli) before anything is
// installed. The bodies it leaves are compressed as before
// (CompressAndRelease).
func ApplyBrotli(blob []byte, bodies []*Body) (applied int, err error) {
	streams, err := parseBrotli(blob)
	if err != nil || len(streams) == 0 {
		return 0, err
	}
	for _, b := range bodies {
		old := b.enc.Load()
		if old == nil || !old.partial || len(b.JSON) < minCompress {
			continue
		}
		br, ok := streams[b.ETag()]
		if !ok {
			continue
		}
		// A copy: a slice would keep the whole blob for as long as any one
		// body of it is served, versions later.
		b.install(old, true, nil, bytes.Clone(br))
		if c := b.enc.Load(); c != nil && !c.partial {
			applied++
		}
	}
	return applied, nil
}

// parseBrotli reads a MarshalBrotli blob into ETag → brotli bytes (slices of
// blob).
func parseBrotli(blob []byte) (map[string][]byte, error) {
	rest, ok := bytes.CutPrefix(blob, []byte(brotliMagic))
	if !ok {
		return nil, fmt.Errorf("%w: no magic line", ErrBadBrotli)
	}
	field := func() ([]byte, bool) {
		if len(rest) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return nil, false
		}
		f := rest[4 : 4+n]
		rest = rest[4+n:]
		return f, true
	}
	streams := map[string][]byte{}
	for len(rest) > 0 {
		etag, ok1 := field()
		br, ok2 := field()
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: entry %d is cut short", ErrBadBrotli, len(streams)+1)
		}
		if !madeETag(string(etag)) {
			return nil, fmt.Errorf("%w: entry %d's ETag (%d bytes) is not one this program makes", ErrBadBrotli, len(streams)+1, len(etag))
		}
		streams[string(etag)] = br
	}
	return streams, nil
}

// decodesTo reports whether br is a brotli stream of exactly want, reading no
// more of its output than len(want) and a buffer, so a stream that expands
// without end costs no more than the body it claims to be.
func decodesTo(br, want []byte) bool {
	src := bytes.NewReader(br)
	r := brotli.NewReader(src)
	defer r.Close()
	var buf [32 << 10]byte
	for {
		n, err := r.Read(buf[:])
		if n > len(want) || !bytes.Equal(buf[:n], want[:n]) {
			return false
		}
		want = want[n:]
		if errors.Is(err, io.EOF) {
			// The reader stops at the stream's end; bytes after it would
			// reach clients as a broken stream.
			return len(want) == 0 && src.Len() == 0
		}
		if err != nil {
			return false
		}
	}
}
