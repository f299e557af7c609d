package representation

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	brotli "github.com/molecule-man/go-brrr"
	"golang.org/x/sync/singleflight"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/bounded"
)

// Body is one response body in every encoding worth sending, with the header
// values of each, so serving it only picks one. It is immutable.
type Body struct {
	// Encoded is the identity encoding.
	Encoded
	Lang string // Content-Language; "" for bodies without localized text
	// ID is the first 128 bits of the sha256 of the identity bytes: the
	// body's address in a store, by which versions share it. Zero when not
	// known.
	ID [16]byte

	// Language is Lang as a header field, shared by the locale's bodies;
	// never nil, its Name is "" when Lang is.
	Language *Field

	gzip, br *Encoded // nil where the encoding would not make the body smaller
}

// NewBody wraps bytes with no compressed encodings; lang is the
// Content-Language ("" for none).
func NewBody(b []byte, lang string) *Body { return Assemble(b, ETag(b), lang, nil, "", nil, "") }

// Encode makes a body in every encoding at effort e: for the few bodies a
// server renders itself (diffs, pages).
func Encode(b []byte, lang string, e Effort) *Body {
	gz, br := Compress(b, e)
	return Assemble(b, ETag(b), lang, gz, ETag(gz), br, ETag(br))
}

// Assemble makes a body from its encodings in memory and their ETags; gz and
// br are nil where there is none.
func Assemble(identity []byte, etag, lang string, gz []byte, gzETag string, br []byte, brETag string) *Body {
	mem := func(b []byte, etag string) Source {
		if b == nil {
			return Source{}
		}
		sum, _ := ParseETag(etag)
		return Source{Mem: b, Len: len(b), Sum: sum}
	}
	return Stored(lang, mem(identity, etag), mem(gz, gzETag), mem(br, brETag))
}

// Source says where an encoding's bytes are: in memory, in a segment, or,
// for an identity not stored, nowhere but in the gzip it decompresses from.
// The zero Source is an encoding the body does not have.
type Source struct {
	Mem []byte
	Seg *blob.Segment
	Off int64
	Len int
	Sum uint64 // the bytes' blob.Checksum, which the ETag quotes
}

func (s Source) present() bool { return s.Mem != nil || s.Seg != nil || s.Len > 0 }

// Stored makes a body of its encodings' sources. An identity with neither
// Mem nor Seg is read by decompressing gz, which must then be present.
func Stored(lang string, identity, gz, br Source) *Body {
	enc := func(src Source, coding string) *Encoded {
		if !src.present() {
			return nil
		}
		e := newEncoded(src, coding)
		return &e
	}
	b := &Body{Encoded: newEncoded(identity, ""), Lang: lang, Language: languageField(lang),
		gzip: enc(gz, "gzip"), br: enc(br, "br")}
	if identity.Mem == nil && identity.Seg == nil {
		b.from = b.gzip
	}
	return b
}

// Gzip and Brotli are the body's compressed encodings; nil where there is none.
func (b *Body) Gzip() *Encoded   { return b.gzip }
func (b *Body) Brotli() *Encoded { return b.br }

// JSON is the body's identity bytes: what a page or a diff decodes. An error
// means its stored bytes failed their check.
func (b *Body) JSON() ([]byte, error) { return b.Encoded.Read() }

// noField stands for a header a body does not have.
var noField Field

// languages holds one Content-Language field per language, shared by its bodies.
var languages sync.Map // string → *Field

func languageField(lang string) *Field {
	if lang == "" {
		return &noField
	}
	if f, ok := languages.Load(lang); ok {
		return f.(*Field)
	}
	f := NewField("Content-Language", lang)
	shared, _ := languages.LoadOrStore(lang, &f)
	return shared.(*Field)
}

// The Content-Encoding fields, shared by every compressed representation.
var encodingFields = map[string]*Field{
	"":     &noField,
	"gzip": {Name: "Content-Encoding", Value: []string{"gzip"}},
	"br":   {Name: "Content-Encoding", Value: []string{"br"}},
}

// Encoded is one encoding of a body, with its header values made once.
type Encoded struct {
	src Source
	// from: an identity not stored, decompressed from this gzip when read.
	from *Encoded
	// checked: a stored blob's bytes passed their check (Check).
	checked atomic.Bool
	// inflated: the identity decompressed from a gzip in memory, which has
	// no cache to keep it in; kept while the body is.
	inflated atomic.Pointer[[]byte]
	// ETagField is the strong, quoted ETag of these bytes (ETag).
	ETagField Field
	// Encoding is the Content-Encoding field, shared by the coding's
	// representations; never nil, its Name is "" for identity.
	Encoding *Field
	// LengthHeader is Content-Length, for net/http (fasthttp counts the bytes).
	LengthHeader []string
}

// ETag is the representation's strong, quoted entity tag.
func (e *Encoded) ETag() string { return e.ETagField.Value[0] }

// Len is the number of bytes.
func (e *Encoded) Len() int { return e.src.Len }

// InflatedFrom is the gzip an identity not stored is decompressed from when
// read; nil for bytes stored or in memory. Two such identities whose gzips
// are the same bytes are the same bytes.
func (e *Encoded) InflatedFrom() *Encoded { return e.from }

// Read returns the bytes: from memory, or read from their segment (through
// its cache, checked), or decompressed from the gzip they are kept as. An
// error means the stored bytes failed their check; they are never returned.
func (e *Encoded) Read() ([]byte, error) {
	switch {
	case e.src.Mem != nil:
		return e.src.Mem, nil
	case e.src.Seg != nil:
		return e.src.Seg.Read(e.src.Off, e.src.Len, e.src.Sum)
	case e.from != nil:
		if b := e.inflated.Load(); b != nil {
			return *b, nil
		}
		return e.inflate()
	}
	return []byte{}, nil
}

// inflate decompresses an identity from its gzip, keeping the result in the
// gzip's segment's cache.
func (e *Encoded) inflate() ([]byte, error) {
	gz := e.from
	var key blob.Key
	cache := (*blob.Cache)(nil)
	if gz.src.Seg != nil {
		key, cache = gz.src.Seg.CacheKey(gz.src.Off), gz.src.Seg.Cache()
		if b, ok := cache.Get(key); ok {
			return b, nil
		}
	}
	zb, err := gz.Read()
	if err != nil {
		return nil, err
	}
	zr, err := gunzip(zb)
	if err == nil {
		defer gzipReaders.Put(zr)
		// Deflate expands at most 1032 to 1: a length no gzip of these bytes
		// reaches (a damaged index) allocates no more than the gzip could.
		b := make([]byte, 0, min(e.src.Len, 1032*len(zb)))
		buf := bytes.NewBuffer(b)
		_, err = io.Copy(buf, io.LimitReader(zr, int64(e.src.Len)+1))
		b = buf.Bytes()
		if err == nil && (len(b) != e.src.Len || blob.Checksum(b) != e.src.Sum) {
			err = blob.ErrCorrupt
		}
		if err == nil {
			if gz.src.Seg == nil || gz.src.Seg.InMemory() {
				// The edition is in memory: its identities may be too,
				// rather than decompressed on every request.
				e.inflated.Store(&b)
			} else {
				cache.Add(key, b)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("identity from gzip: %w", err)
}

// gzipReaders are the readers inflate decompresses with: a new one allocates
// its 32 KiB window, which was a third of the time an identity read took.
var gzipReaders sync.Pool // *gzip.Reader

// gunzip is a pooled reader of the gzip zb; put it back once read.
func gunzip(zb []byte) (*gzip.Reader, error) {
	if zr, ok := gzipReaders.Get().(*gzip.Reader); ok {
		if err := zr.Reset(bytes.NewReader(zb)); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return gzip.NewReader(bytes.NewReader(zb))
}

// Blob is where a stored representation's bytes are in a segment's file, for
// a writer that sends them from the file (sendfile); false for bytes in
// memory or decompressed. Check must have passed first.
func (e *Encoded) Blob() (f *os.File, off int64, n int, ok bool) {
	if e.src.Seg == nil || e.src.Seg.File() == nil {
		return nil, 0, 0, false
	}
	return e.src.Seg.File(), e.src.Off, e.src.Len, true
}

// Check reads a stored blob's bytes once and checks them, so what is sent
// from the file (Blob) is known good; later calls cost an fstat, and read
// them again only if the file was written since it was opened.
func (e *Encoded) Check() error {
	if e.src.Seg == nil || e.checked.Load() && e.src.Seg.Unchanged() {
		return nil
	}
	if err := e.src.Seg.Check(e.src.Off, e.src.Len, e.src.Sum); err != nil {
		return err
	}
	e.checked.Store(true)
	return nil
}

// Source is where the bytes are.
func (e *Encoded) Source() Source { return e.src }

func newEncoded(src Source, encoding string) Encoded {
	return Encoded{
		src:          src,
		ETagField:    Field{Name: "Etag", Value: []string{FormatETag(src.Sum)}},
		Encoding:     encodingFields[encoding],
		LengthHeader: []string{strconv.Itoa(src.Len)},
	}
}

// ETagSize is how many bytes an ETag's hash has (ETag).
const ETagSize = 8

// ETag is the strong ETag of b, quoted: the CRC-64 (ECMA) of its bytes
// (blob.Checksum) in unpadded base64url, "" for nil. It only has to change
// when the bytes at one URL do, and CRC-64 is six times faster than SHA-256
// here.
func ETag(b []byte) string {
	if b == nil {
		return ""
	}
	return FormatETag(blob.Checksum(b))
}

// FormatETag quotes a checksum as an ETag.
func FormatETag(sum uint64) string {
	var b [ETagSize]byte
	binary.BigEndian.PutUint64(b[:], sum)
	return `"` + base64.RawURLEncoding.EncodeToString(b[:]) + `"`
}

// ParseETag returns the checksum an ETag FormatETag made quotes.
func ParseETag(etag string) (uint64, error) {
	if len(etag) < 2 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		return 0, errors.New("not a quoted ETag")
	}
	sum, err := base64.RawURLEncoding.DecodeString(etag[1 : len(etag)-1])
	if err != nil || len(sum) != ETagSize {
		return 0, errors.New("not an ETag this program makes")
	}
	return binary.BigEndian.Uint64(sum), nil
}

// MinCompress: below this, compression saves less than its headers cost.
const MinCompress = 256

// Effort is how hard Compress works: a gzip level and a brotli quality.
type Effort struct {
	Gzip   int // compress/gzip level
	Brotli int // brotli quality (go-brrr, the same scale as Google's encoder)
}

var (
	// Best is what the service serves (brotli 11 was 13 % smaller but far
	// too slow to run over every body of a version).
	Best = Effort{Gzip: gzip.BestCompression, Brotli: 9}
	// Fast is for tests, where the bytes only have to decode: gzip's fastest
	// level, not Huffman-only, whose every byte is a literal to inflate one
	// at a time; tests read bodies back far more than they compress them.
	Fast = Effort{Gzip: gzip.BestSpeed, Brotli: 0}
)

// Compress returns b's gzip and brotli at effort e, each nil where it would
// not be smaller than b.
func Compress(b []byte, e Effort) (gz, br []byte) { return NewCompressor(e).Compress(b) }

// A Compressor compresses bodies one at a time at one Effort, reusing its
// writers; a reset writer writes what a new one would
// (TestCompressorMatchesNew).
type Compressor struct {
	effort Effort
	buf    bytes.Buffer
	gz     *gzip.Writer
	br     [2]*brotli.Writer // the small window's and the large one's
}

// Brotli's window: 2^smallWindow bytes for a body that fits (most items),
// else 2^largeWindow. Only two sizes, because a writer's tables are 2.4 MB
// at the small window and some 40 MB at any window over 2^17: a writer that
// has compressed one large body keeps them while it is kept.
const (
	smallWindow = 16
	largeWindow = 22
)

// LargeWindow says whether Brotli compresses an n-byte body at the large
// window, with its large writer: a caller with many bodies gives those to
// one Compressor, so it holds one large writer's tables, not one per core.
func LargeWindow(n int) bool { return n > 1<<smallWindow }

// BrotliTables says which tables the large writer compresses an n-byte
// body with: go-brrr's hash tables for a body of 1 MB or more, written at
// once, at this quality and window, are another kind than below, 32 MB each,
// and a writer keeps the kind it used last, letting go of the other to
// go-brrr's pool. A caller with many large bodies gives each kind a writer
// of its own. A stream (CompressStream) is written in chunks: kind 0.
func BrotliTables(n int) int {
	if n >= 1<<20 {
		return 1
	}
	return 0
}

// NewCompressor returns a Compressor at effort e.
func NewCompressor(e Effort) *Compressor { return &Compressor{effort: e} }

// Compress returns b's gzip and brotli, each nil where it would not be
// smaller than b. The same bytes and effort always give the same output.
func (z *Compressor) Compress(b []byte) (gz, br []byte) { return z.Gzip(b), z.Brotli(b) }

// Gzip is Compress's gzip alone: two compressors make a body's two encodings
// on two cores at once.
func (z *Compressor) Gzip(b []byte) []byte {
	return z.kept(b, "gzip", func() []byte {
		var err error
		if z.gz == nil {
			z.gz, err = gzip.NewWriterLevel(io.Discard, z.effort.Gzip)
		}
		return z.encode(z.gz, err, b)
	})
}

// Brotli is Compress's brotli alone.
func (z *Compressor) Brotli(b []byte) []byte {
	return z.kept(b, "br", func() []byte {
		var err error
		lgwin, w := smallWindow, &z.br[0]
		if LargeWindow(len(b)) {
			lgwin, w = largeWindow, &z.br[1]
		}
		if *w == nil {
			*w, err = brotli.NewWriterOptions(io.Discard, z.effort.Brotli, brotli.WriterOptions{LGWin: lgwin})
		}
		return z.encode(*w, err, b)
	})
}

// kept is b compressed in coding by compress, nil for a body too short to
// compress; with compressions shared (ShareCompressions), the bytes kept
// from compressing b before (a copy: the caller's own).
func (z *Compressor) kept(b []byte, coding string, compress func() []byte) []byte {
	if len(b) < MinCompress {
		return nil
	}
	kept := shared.Load()
	if kept == nil {
		return compress()
	}
	key := compressed{sha256.Sum256(b), z.effort, coding}
	// One compression of a body at a time: parallel tests import the same
	// versions at once.
	v, _, _ := compressing.Do(fmt.Sprintf("%x %v %s", key.sum, key.effort, coding), func() (any, error) {
		if v, ok := kept.Get(key); ok {
			return v, nil
		}
		v := compress()
		kept.Add(key, v)
		return v, nil
	})
	return bytes.Clone(v.([]byte))
}

// shared, when set (ShareCompressions), keeps what the process compressed.
var (
	shared      atomic.Pointer[bounded.Cache[compressed, []byte]]
	compressing singleflight.Group
)

// compressed names a body compressed at an effort in a coding.
type compressed struct {
	sum    [sha256.Size]byte
	effort Effort
	coding string
}

// ShareCompressions has every Compressor of the process keep what it
// compressed, up to maxBytes (least recently used leave first), and give a
// body compressed at an effort before the same bytes again (copies) rather
// than compress it again: they are the bytes it would make
// (TestCompressorMatchesNew). It is for a process that imports the same
// versions over and over, a test binary, where compressing was most of the
// time; a server or an import compresses each body once, and never calls it.
func ShareCompressions(maxBytes int64) {
	size := func(_ compressed, v []byte) int64 { return int64(len(v) + 64) }
	shared.Store(bounded.New(bounded.Limits{Bytes: maxBytes}, size))
}

// encode compresses b with w (made with error err), if that is smaller.
func (z *Compressor) encode(w interface {
	io.WriteCloser
	Reset(io.Writer)
}, err error, b []byte) []byte {
	if err != nil {
		return nil
	}
	z.buf.Reset()
	w.Reset(&z.buf)
	// In one write: brotli's output depends on how its input is split.
	if _, err := w.Write(b); err != nil || w.Close() != nil || z.buf.Len() >= len(b) {
		return nil
	}
	return bytes.Clone(z.buf.Bytes())
}

// Streamed is a body compressed as it was written (CompressStream): the
// identity's length and checksum, and its gzip and brotli; Identity holds
// the bytes only where there are no compressed encodings (a body too short
// to compress).
type Streamed struct {
	Len                    int64
	Sum                    uint64 // blob.Checksum of the identity
	Identity, Gzip, Brotli []byte
}

// streamChunk is how many bytes at a time a streamed body reaches the
// compressors: always the same cuts for the same bytes, so the same output
// whatever the writes were (brotli's depends on how its input is split).
const streamChunk = 1 << 16

// CompressStream compresses the bytes write writes, without holding them
// (a body of tens of MB, a bulk file): gzip as they are written, and brotli
// at the large window on a goroutine of its own, so one stream keeps two
// cores busy. Below the length Compress leaves uncompressed, the identity is
// kept instead. The same bytes and effort always give the same output.
func (z *Compressor) CompressStream(write func(io.Writer) error) (Streamed, error) {
	var gz, br bytes.Buffer
	var err error
	if z.gz == nil {
		z.gz, err = gzip.NewWriterLevel(io.Discard, z.effort.Gzip)
	}
	if err == nil && z.br[1] == nil {
		z.br[1], err = brotli.NewWriterOptions(io.Discard, z.effort.Brotli, brotli.WriterOptions{LGWin: largeWindow})
	}
	if err != nil {
		return Streamed{}, err
	}
	z.gz.Reset(&gz)
	z.br[1].Reset(&br)
	s := &streamer{crc: crc64.New(crcTable), gz: z.gz, br: z.br[1]}
	s.start()
	err = write(s)
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Streamed{}, err
	}
	out := Streamed{Len: s.n, Sum: s.crc.Sum64()}
	if s.n < MinCompress {
		out.Identity = s.head
		return out, nil
	}
	out.Gzip, out.Brotli = gz.Bytes(), br.Bytes()
	return out, nil
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// streamChunks is how many chunks a stream's brotli may lag its gzip by.
const streamChunks = 3

// streamer counts and checksums what it is written, keeps the first
// MinCompress bytes, and passes it to the compressors in streamChunk cuts:
// to gzip at once, to brotli through a goroutine (start), the chunks
// recycled through free.
type streamer struct {
	n     int64
	crc   hash.Hash64
	head  []byte
	chunk []byte
	gz    io.WriteCloser
	br    io.WriteCloser
	err   error

	full, free chan []byte
	brErr      chan error
}

// start runs the brotli writer's goroutine.
func (s *streamer) start() {
	s.full, s.free, s.brErr = make(chan []byte, streamChunks), make(chan []byte, streamChunks+1), make(chan error, 1)
	for range streamChunks + 1 {
		s.free <- make([]byte, 0, streamChunk)
	}
	s.chunk = <-s.free
	go func() {
		var err error
		for c := range s.full {
			if err == nil {
				_, err = s.br.Write(c)
			}
			s.free <- c[:0]
		}
		if cerr := s.br.Close(); err == nil {
			err = cerr
		}
		s.brErr <- err
	}()
}

func (s *streamer) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.n += int64(len(p))
	s.crc.Write(p)
	if len(s.head) < MinCompress {
		s.head = append(s.head, p[:min(len(p), MinCompress-len(s.head))]...)
	}
	for rest := p; len(rest) > 0; {
		k := min(len(rest), streamChunk-len(s.chunk))
		s.chunk, rest = append(s.chunk, rest[:k]...), rest[k:]
		if len(s.chunk) == streamChunk {
			s.flush()
		}
	}
	return len(p), s.err
}

func (s *streamer) flush() {
	if _, err := s.gz.Write(s.chunk); err != nil && s.err == nil {
		s.err = err
	}
	s.full <- s.chunk
	s.chunk = <-s.free
}

// close writes the last chunk and ends both compressions, waiting for
// brotli's goroutine.
func (s *streamer) close() error {
	if len(s.chunk) > 0 {
		s.flush()
	}
	close(s.full)
	if err := s.gz.Close(); err != nil && s.err == nil {
		s.err = err
	}
	if err := <-s.brErr; err != nil && s.err == nil {
		s.err = err
	}
	return s.err
}

// Decode returns what an encoding of a body decodes to, for checks.
func Decode(e *Encoded) ([]byte, error) {
	b, err := e.Read()
	if err != nil || e.Encoding.Name == "" {
		return b, err
	}
	var r io.Reader = bytes.NewReader(b)
	switch e.Encoding.Value[0] {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	}
	return io.ReadAll(r)
}

// Pick chooses the representation for Accept-Encoding: the acceptable coding
// with the highest q-value (brotli first on a tie), else identity. It
// allocates nothing.
func (b *Body) Pick(acceptEncoding []string) *Encoded {
	if b.gzip == nil && b.br == nil || len(acceptEncoding) == 0 {
		return &b.Encoded
	}
	qgz, qbr := acceptQ(acceptEncoding)
	switch {
	case b.br != nil && qbr > 0 && qbr >= qgz:
		return b.br
	case b.gzip != nil && qgz > 0:
		return b.gzip
	case b.br != nil && qbr > 0:
		return b.br
	}
	return &b.Encoded
}

// pickCompressed is Pick for a body sent compressed only (Route.Compressed):
// the acceptable coding with the highest q-value (brotli first on a tie),
// gzip without Accept-Encoding (RFC 9110 § 12.5.3: any coding is then
// acceptable), and false when Accept-Encoding takes neither. A body with no
// compressed encoding (too short to compress) is its identity.
func (b *Body) pickCompressed(acceptEncoding []string) (*Encoded, bool) {
	switch {
	case b.gzip == nil && b.br == nil:
		return &b.Encoded, true
	case len(acceptEncoding) == 0 && b.gzip != nil:
		return b.gzip, true
	case len(acceptEncoding) == 0:
		return b.br, true
	}
	qgz, qbr := acceptQ(acceptEncoding)
	switch {
	case b.br != nil && qbr > 0 && qbr >= qgz:
		return b.br, true
	case b.gzip != nil && qgz > 0:
		return b.gzip, true
	case b.br != nil && qbr > 0:
		return b.br, true
	case b.gzip != nil:
		return b.gzip, false
	}
	return b.br, false
}

// Representations lists the identity and compressed representations.
func (b *Body) Representations() []*Encoded {
	reps := []*Encoded{&b.Encoded}
	for _, r := range []*Encoded{b.gzip, b.br} {
		if r != nil {
			reps = append(reps, r)
		}
	}
	return reps
}

// Sizes sums the bytes of every representation of bodies.
func Sizes(bodies []*Body) (identity, gz, br int) {
	for _, b := range bodies {
		identity += b.Len()
		if b.gzip != nil {
			gz += b.gzip.Len()
		}
		if b.br != nil {
			br += b.br.Len()
		}
	}
	return identity, gz, br
}

// acceptQ returns the q-values (in thousandths) Accept-Encoding gives gzip
// and br; "*" stands for any coding not named.
func acceptQ(values []string) (gz, br int) {
	gz, br, star := -1, -1, -1
	for _, v := range values {
		for len(v) > 0 {
			var item string
			item, v, _ = strings.Cut(v, ",")
			name, q := parseCoding(item)
			switch {
			case strings.EqualFold(name, "gzip") || strings.EqualFold(name, "x-gzip"):
				gz = q
			case strings.EqualFold(name, "br"):
				br = q
			case name == "*":
				star = q
			}
		}
	}
	if gz < 0 {
		gz = max(star, 0)
	}
	if br < 0 {
		br = max(star, 0)
	}
	return gz, br
}

// parseCoding splits "gzip;q=0.8" into the name and q in thousandths (1000
// when absent; 0 when malformed).
func parseCoding(item string) (string, int) {
	name, params, _ := strings.Cut(item, ";")
	name, params = trim(name), trim(params)
	q := 1000
	if len(params) >= 2 && (params[0] == 'q' || params[0] == 'Q') && params[1] == '=' {
		q = parseQ(trim(params[2:]))
	}
	return name, q
}

func parseQ(s string) int {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0
	}
	q := int(s[0]-'0') * 1000
	if len(s) > 1 {
		if s[1] != '.' {
			return 0
		}
		scale := 100
		for i := 2; i < len(s) && i < 5; i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0
			}
			q += int(s[i]-'0') * scale
			scale /= 10
		}
	}
	return min(q, 1000)
}

func trim(s string) string { return strings.Trim(s, " \t") }
