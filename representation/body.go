package representation

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	brotli "github.com/molecule-man/go-brrr"

	"github.com/refdata/refdata/cores"
)

// Body is one response body rendered at load time, in every encoding worth
// sending, with the header values that belong to each, so serving it only picks
// one and writes it.
type Body struct {
	// Encoded is the identity encoding; JSON is its bytes.
	Encoded
	JSON []byte
	Lang string // Content-Language; "" for bodies without localized text

	// Language is Lang as a header field, shared by every body of the locale;
	// never nil, its Name is "" when Lang is.
	Language *Field

	enc atomic.Pointer[compressed] // set by Compress
}

// NewBody wraps rendered bytes; lang is the Content-Language ("" for none).
func NewBody(b []byte, lang string) *Body { return newBody(b, lang, "") }

// newBody is NewBody with the bytes' ETag when another process made it ("":
// made here).
func newBody(b []byte, lang, etag string) *Body {
	body := &Body{Encoded: encoded(b, "", etag), JSON: b, Lang: lang, Language: &noField}
	if lang != "" {
		body.Language = languageField(lang)
	}
	return body
}

// noField stands for a header a body does not have.
var noField Field

// languages holds one Content-Language field per language: every body of a
// locale shares it (a version has tens of thousands of bodies and 18 locales).
var languages sync.Map // string → *Field

func languageField(lang string) *Field {
	if f, ok := languages.Load(lang); ok {
		return f.(*Field)
	}
	f := NewField("Content-Language", lang)
	shared, _ := languages.LoadOrStore(lang, &f)
	return shared.(*Field)
}

// The Content-Encoding fields, shared by every compressed representation.
var encodingFields = map[string]*Field{
	"gzip": {Name: "Content-Encoding", Value: []string{"gzip"}},
	"br":   {Name: "Content-Encoding", Value: []string{"br"}},
}

// Encoded is one encoding of a body, with its header values made once.
type Encoded struct {
	Bytes []byte
	// ETagField is the strong, quoted ETag derived from these bytes (ETag).
	ETagField Field
	// Encoding is the Content-Encoding field, shared by every representation in
	// the coding; never nil, its Name is "" for identity.
	Encoding *Field
	// LengthHeader is Content-Length, for net/http (fasthttp counts the bytes).
	LengthHeader []string

	file *fileCopy // the bytes in the body file (InFile); nil when not there
}

// ETag is the representation's strong, quoted entity tag.
func (e *Encoded) ETag() string { return e.ETagField.Value[0] }

func newEncoded(b []byte, encoding string) Encoded { return encoded(b, encoding, "") }

// etagSum is how many bytes of a body's SHA-256 its ETag gives, in unpadded
// base64url, quoted.
const etagSum = 18

// encoded is newEncoded with b's ETag when another process made it from the
// same bytes with the same code ("": made here).
func encoded(b []byte, encoding, etag string) Encoded {
	if etag == "" {
		sum := sha256.Sum256(b)
		etag = `"` + base64.RawURLEncoding.EncodeToString(sum[:etagSum]) + `"`
	}
	r := Encoded{
		Bytes:        b,
		ETagField:    Field{Name: "Etag", Value: []string{etag}},
		LengthHeader: []string{strconv.Itoa(len(b))},
	}
	r.Encoding = &noField
	if encoding != "" {
		r.Encoding = encodingFields[encoding]
		r.file = toFile(b, encoding)
	}
	return r
}

// compressed holds a body's gzip and brotli representations; nil where the
// encoding would not make the body smaller. partial: only gzip has been made
// (CompressGzip); a later Compress adds brotli. The pointers point into the
// struct itself (one allocation per body, not three).
type compressed struct {
	gzip, br   *Encoded
	partial    bool
	gzipV, brV Encoded
}

// lacks reports whether compress(withBrotli) has anything to make for a body
// whose representations are c (nil: none made yet).
func (c *compressed) lacks(withBrotli bool) bool {
	return c == nil || (c.partial && withBrotli)
}

// minCompress: below this, compression saves less than its headers cost.
const minCompress = 256

// Effort is how hard Compress works: a gzip level and a brotli quality.
type Effort struct {
	Gzip   int // compress/gzip level
	Brotli int // brotli quality (go-brrr, the same scale as Google's encoder)
}

// GzipLevel is the gzip level a body of size bytes is compressed at: e.Gzip,
// but no more than gzip's default (6) from LargeBody bytes on. The rule is
// this one function, so every writer of a body's gzip (this process, the
// compression child, package builder's child) makes the same bytes and ETag.
//
// Why: the large bodies are the lists, which change in every version (one
// item changes them), and they were most of a new version's gzip work: 57 of
// the 62 MB an 18-locale version had to gzip anew. Level 6 made them 1.5×
// faster than 9 for 1.8 % more bytes (6.3 MB of list bodies: 9.97 % of their
// size at level 9, 10.15 % at 6; BENCHMARKS.md § Stop 31). Smaller bodies, the
// items apps fetch most, keep level 9.
func (e Effort) GzipLevel(size int) int {
	if size >= LargeBody && e.Gzip > gzip.DefaultCompression {
		return gzip.DefaultCompression
	}
	return e.Gzip
}

// LargeBody is the size from which GzipLevel caps the level: above every item
// body of the sample data (the largest, a weapon, is 29 KB), below its lists.
const LargeBody = 64 << 10

var (
	// Best is what the service serves: gzip 9 (6 for large bodies, GzipLevel)
	// and brotli 9. Brotli's level 11 was some 13 % smaller but 28 times
	// slower with the earlier encoder (andybalholm/brotli), too slow to run
	// over every body of a version at load time.
	Best = Effort{Gzip: gzip.BestCompression, Brotli: 9}
	// Fast is for tests of the protocol, where the bytes only have to decode:
	// gzip 1 and brotli 1, several times cheaper than Best.
	Fast = Effort{Gzip: gzip.BestSpeed, Brotli: 1}
)

// effort is the process's Effort; only tests change it (UseEffort).
var effort atomic.Pointer[Effort]

func init() { effort.Store(&Best) }

// UseEffort makes every later Compress work at e and returns a function that
// restores the previous effort. Tests call it from TestMain with Fast; the
// service never calls it. Bodies compressed before the call keep their bytes.
func UseEffort(e Effort) (restore func()) {
	prev := effort.Swap(&e)
	return func() { effort.Store(prev) }
}

// Compress makes the body's gzip (standard library) and brotli (go-brrr)
// representations at the process's Effort (Best unless a test chose otherwise).
// Safe to call while the body is being served: readers see either no compressed
// representations, gzip alone (CompressGzip) or both.
func (b *Body) Compress() { b.compress(true) }

// CompressGzip makes the gzip representation alone, a fraction of Compress's
// cost (brotli at quality 9 is most of it): a hot swap waits for gzip on the
// bodies that changed, serves, and adds brotli in the background, so no client
// that accepts gzip ever gets a new version's identity bodies.
func (b *Body) CompressGzip() { b.compress(false) }

func (b *Body) compress(withBrotli bool) {
	old := b.enc.Load()
	if !old.lacks(withBrotli) {
		return
	}
	var gz, br []byte
	if len(b.JSON) >= minCompress {
		z := compressorFor(*effort.Load())
		if old == nil {
			gz = z.gzip(b.JSON)
		}
		if withBrotli {
			br = z.brotli(b.JSON)
		}
		z.release()
	}
	b.install(old, withBrotli, gz, br)
}

// install makes the body's compressed representations from gz and br, made
// from its bytes here or by the compression child (nil: not made; gzip is
// taken from old when old has it), unless another goroutine replaced old
// meanwhile. An encoding that is not smaller than the body is left out.
func (b *Body) install(old *compressed, withBrotli bool, gz, br []byte) {
	b.installTagged(old, withBrotli, gz, "", br)
}

// installTagged is install with gz's ETag when another process made it ("":
// made here).
func (b *Body) installTagged(old *compressed, withBrotli bool, gz []byte, gzETag string, br []byte) {
	c := &compressed{partial: !withBrotli}
	if len(b.JSON) >= minCompress {
		if old != nil {
			if old.gzip != nil {
				c.gzipV = *old.gzip
				c.gzip = &c.gzipV
			}
		} else if gz != nil && len(gz) < len(b.JSON) {
			c.gzipV = encoded(gz, "gzip", gzETag)
			c.gzip = &c.gzipV
		}
		if br != nil && len(br) < len(b.JSON) {
			c.brV = newEncoded(br, "br")
			c.br = &c.brV
		}
	}
	b.enc.CompareAndSwap(old, c)
}

// Brotli's window is sized to the body, from 2^minWindow to 2^maxWindow bytes,
// so small bodies do not pay for a 4 MiB window.
const (
	minWindow = 16
	maxWindow = 22
)

// compressor keeps the encoders between bodies: a brotli writer's tables are
// hundreds of kilobytes, and making them anew for each of thousands of small
// bodies costs more than compressing (a reused writer measured 2.6–3.2× faster
// on item bodies). Writers are reset between bodies, which makes their output
// identical to a new writer's (TestPooledWritersMatchNew).
type compressor struct {
	effort  Effort
	pool    *sync.Pool
	buf     bytes.Buffer
	gz      *gzip.Writer
	gzLarge *gzip.Writer                              // for bodies of LargeBody bytes or more
	br      [maxWindow - minWindow + 1]*brotli.Writer // by window size
	pace    cores.Pacer                               // the goroutine holding the compressor
}

// chunk is how much of a body gzip takes between yields to requests
// (cores.Pacer): at level 9, well under a millisecond's work.
const chunk = 16 << 10

// write feeds b to w a chunk at a time.
func (z *compressor) write(w io.Writer, b []byte) {
	for len(b) > 0 {
		z.pace.Yield()
		n := min(len(b), chunk)
		_, _ = w.Write(b[:n])
		b = b[n:]
	}
}

// compressors holds one pool per Effort in use (in practice one or two).
var compressors sync.Map // Effort → *sync.Pool of *compressor

func compressorFor(e Effort) *compressor {
	p, ok := compressors.Load(e)
	if !ok {
		p, _ = compressors.LoadOrStore(e, &sync.Pool{})
	}
	pool := p.(*sync.Pool)
	if z, ok := pool.Get().(*compressor); ok {
		return z
	}
	z := &compressor{effort: e, pool: pool}
	z.gz = newGzip(&z.buf, e.GzipLevel(0))
	z.gzLarge = z.gz // one writer when the levels agree (Fast)
	if l := e.GzipLevel(LargeBody); l != e.GzipLevel(0) {
		z.gzLarge = newGzip(&z.buf, l)
	}
	return z
}

func newGzip(w io.Writer, level int) *gzip.Writer {
	z, err := gzip.NewWriterLevel(w, level)
	if err != nil {
		z, _ = gzip.NewWriterLevel(w, gzip.DefaultCompression)
	}
	return z
}

// release puts z back in its pool. What it holds is read before the Put:
// after it, another goroutine may take z and fill its writers (a race
// stop 50's CI found).
func (z *compressor) release() {
	large := slices.ContainsFunc(z.br[1:], func(w *brotli.Writer) bool { return w != nil })
	z.pool.Put(z)
	if large {
		pooled.Store(true)
	}
}

// pooled is set when a compressor that has a brotli writer for a window past
// the smallest goes back to its pool, and cleared by CompressAndRelease, which
// then knows whether the pools may hold tens of megabytes. A compressor for
// bodies under 64 KiB alone holds 2–3 MB; one that has compressed a 200 KB
// body, 37 MB (throwaway measure, BENCHMARKS.md § Stop 44).
var pooled atomic.Bool

func (z *compressor) gzip(b []byte) []byte {
	w := z.gz
	if len(b) >= LargeBody {
		w = z.gzLarge
	}
	z.buf.Reset()
	w.Reset(&z.buf)
	z.write(w, b)
	_ = w.Close()
	return bytes.Clone(z.buf.Bytes())
}

func (z *compressor) brotli(b []byte) []byte {
	lgwin := minWindow
	for lgwin < maxWindow && 1<<lgwin < len(b) {
		lgwin++
	}
	z.buf.Reset()
	w := z.br[lgwin-minWindow]
	if w == nil {
		var err error
		// Only a quality or window out of range fails here, and neither is
		// (Best's 9 and Fast's 1 of 0–11, windows 16–22 of 10–24); if one
		// were, the body is served without brotli, the process goes on.
		if w, err = brotli.NewWriterOptions(&z.buf, z.effort.Brotli, brotli.WriterOptions{LGWin: lgwin}); err != nil {
			return nil
		}
		z.br[lgwin-minWindow] = w
	} else {
		w.Reset(&z.buf)
	}
	// In one write: brotli's output depends on how its input is split (gzip's
	// does not), and it runs after a swap, beside a proc left to requests.
	if _, err := w.Write(b); err != nil {
		return nil // never a stream cut short
	}
	if err := w.Close(); err != nil {
		return nil
	}
	return bytes.Clone(z.buf.Bytes())
}

// Pick chooses the representation for an Accept-Encoding request header: the
// acceptable coding with the highest q-value (brotli before gzip on a tie), else
// identity. It allocates nothing.
func (b *Body) Pick(acceptEncoding []string) *Encoded {
	c := b.enc.Load()
	if c == nil || len(acceptEncoding) == 0 {
		return &b.Encoded
	}
	qgz, qbr := acceptQ(acceptEncoding)
	switch {
	case c.br != nil && qbr > 0 && qbr >= qgz:
		return c.br
	case c.gzip != nil && qgz > 0:
		return c.gzip
	case c.br != nil && qbr > 0:
		return c.br
	}
	return &b.Encoded
}

// Representations lists the identity and compressed representations that exist.
func (b *Body) Representations() []*Encoded {
	reps := []*Encoded{&b.Encoded}
	if c := b.enc.Load(); c != nil {
		for _, r := range []*Encoded{c.gzip, c.br} {
			if r != nil {
				reps = append(reps, r)
			}
		}
	}
	return reps
}

// acceptQ returns the q-values (in thousandths) Accept-Encoding gives gzip and br;
// "*" stands for any coding not named.
func acceptQ(values []string) (gz, br int) {
	gz, br, star := -1, -1, -1
	for _, v := range values {
		for len(v) > 0 {
			var item string
			if i := strings.IndexByte(v, ','); i >= 0 {
				item, v = v[:i], v[i+1:]
			} else {
				item, v = v, ""
			}
			name, q := parseCoding(item)
			switch {
			case equalFold(name, "gzip") || equalFold(name, "x-gzip"):
				gz = q
			case equalFold(name, "br"):
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

// parseCoding splits "gzip;q=0.8" into the name and q in thousandths (1000 when
// absent; 0 when malformed, which refuses the coding).
func parseCoding(item string) (string, int) {
	name, params := trim(item), ""
	for i := 0; i < len(item); i++ {
		if item[i] == ';' {
			name, params = trim(item[:i]), item[i+1:]
			break
		}
	}
	q := 1000
	params = trim(params)
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

func trim(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}

// CompressAll compresses bodies in parallel (see each). The bodies may be
// served meanwhile: until one is done it is served as identity.
func CompressAll(bodies []*Body) { each(bodies, 0, true, 0) }

// CompressGzipAll makes the gzip representation of every body that has none
// (see CompressGzip and each). A swap waits for it: while requests come in,
// the compression child has it alone for OffloadPatience, then one in-process
// worker joins.
func CompressGzipAll(bodies []*Body) { each(bodies, 0, false, OffloadPatience) }

// each compresses every body (brotli too when withBrotli), in-process from
// workers goroutines (cores.Workers when ≤ 0: one while requests come in, else
// GOMAXPROCS), or, when Offload is on, in the compression child, which
// in-process workers join only while no request comes in (an idle server, a
// start-up) or, one of them, once patience (> 0) has run out. Bodies the child
// did not answer, if it failed, are compressed here.
//
// An in-process worker asks again before every body whether requests come in,
// and goes back to leaving the work to the child when they do: asked once, a
// moment without requests (the stall of a swap) was enough for one worker to
// compress a whole 18-locale brotli in the serving process, a second of one
// proc beside the requests (BENCHMARKS.md § Stop 28).
//
// It borrows the cores serving leaves free (cores.Borrow) only while bodies are
// compressed in-process. While the child compresses, this process only feeds
// it, and serving keeps its procs: borrowed for a whole post-swap brotli, they
// put serving on two procs beside its clients for seconds, which doubled its
// p99 under a saturating load (BENCHMARKS.md § Stop 27).
//
// It reports whether any body lacked what it makes.
func each(bodies []*Body, workers int, withBrotli bool, patience time.Duration) (worked bool) {
	if !slices.ContainsFunc(bodies, func(b *Body) bool { return b.enc.Load().lacks(withBrotli) }) {
		// Nothing to make (a version whose part and brotli were stored):
		// no compression child is started for it, no core borrowed.
		return false
	}
	c := offloader()
	if c != nil {
		defer doneWith()
	} else {
		defer borrowCores()()
	}
	if workers <= 0 {
		workers = cores.Procs()
		if c == nil {
			workers = cores.Workers()
		}
	}
	start := time.Now()
	var next atomic.Int64
	// leave reports whether worker w leaves the next body to the child.
	leave := func(w int) bool {
		return c != nil && !c.failed() && next.Load() < int64(len(bodies)) &&
			serving() && (w > 0 || patience <= 0 || time.Since(start) < patience)
	}
	var wg sync.WaitGroup
	if c != nil {
		wg.Go(func() { c.feed(bodies, &next, withBrotli) })
	}
	for w := range workers {
		wg.Go(func() {
			var giveBack func() // set while this worker compresses beside a child
			defer func() {
				if giveBack != nil {
					giveBack()
				}
			}()
			for {
				if leave(w) {
					if giveBack != nil {
						giveBack()
						giveBack = nil
					}
					time.Sleep(5 * time.Millisecond)
					continue
				}
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				if c != nil && giveBack == nil {
					giveBack = borrowCores()
				}
				bodies[i].compress(withBrotli)
			}
		})
	}
	wg.Wait()
	if c != nil && c.failed() {
		defer borrowCores()()
		for _, b := range bodies {
			b.compress(withBrotli) // returns at once for a body already done
		}
	}
	return true
}

// borrowCores is cores.Borrow; a variable so the tests count the borrows.
var borrowCores = cores.Borrow

// serving reports whether requests come in, which holds the in-process
// workers of each back while the child works. A variable so that tests decide
// it: a ticking goroutine standing in for requests can itself be held up past
// cores' window on a loaded machine, and the workers would then take the work.
var serving = cores.Busy

// Reuse gives every body of bodies whose bytes equal a compressed body of prev
// that body's compressed representations (they are immutable), so a new version
// compresses only what changed: most bodies of consecutive game versions are the
// same bytes. It returns how many bodies it shared; CompressAll does the rest.
// Bodies that arrived compressed (built by package builder's child) need
// nothing, and then prev is not indexed.
func Reuse(bodies, prev []*Body) int {
	if !slices.ContainsFunc(bodies, func(b *Body) bool { return b.enc.Load() == nil }) {
		return 0
	}
	byETag := map[string]*Body{}
	for _, b := range prev {
		if b.enc.Load() != nil {
			byETag[b.ETag()] = b
		}
	}
	n := 0
	for _, b := range bodies {
		p, ok := byETag[b.ETag()]
		if ok && bytes.Equal(p.JSON, b.JSON) && b.enc.CompareAndSwap(nil, p.enc.Load()) {
			n++
		}
	}
	return n
}

// Kept counts the bodies of bodies that are bodies of prev themselves: taken
// whole from the previous edition (a category whose files did not change, or
// a body package builder's child named as one the server has).
func Kept(bodies, prev []*Body) int {
	old := make(map[*Body]struct{}, len(prev))
	for _, b := range prev {
		old[b] = struct{}{}
	}
	n := 0
	for _, b := range bodies {
		if _, ok := old[b]; ok {
			n++
		}
	}
	return n
}

// Sizes sums the bytes of every representation of bodies: identity, gzip and
// brotli.
func Sizes(bodies []*Body) (identity, gzip, br int) {
	for _, b := range bodies {
		identity += len(b.JSON)
		if c := b.enc.Load(); c != nil {
			if c.gzip != nil {
				gzip += len(c.gzip.Bytes)
			}
			if c.br != nil {
				br += len(c.br.Bytes)
			}
		}
	}
	return identity, gzip, br
}

// CompressAndRelease compresses bodies from workers goroutines (GOMAXPROCS when
// ≤ 0; a server compressing beside serving leaves a core to its requests),
// then hands the memory that loading and compressing left behind back to the
// operating system: a version is loaded rarely, and without this the process
// keeps its load-time peak as RSS.
//
// When it had nothing to compress and no large compressor is pooled, it
// returns at once: what a swap whose bodies all came compressed leaves behind
// was the loader's, and the loader's give-back of the cores released it
// (cores.Borrow). Its collection here marked both editions a second time, 40–60
// ms of CPU for 18 locales, to free nothing (BENCHMARKS.md § Stop 45).
func CompressAndRelease(bodies []*Body, workers int) {
	if !each(bodies, workers, true, 0) && !pooled.Load() {
		return
	}
	// Serving keeps a proc meanwhile: FreeOSMemory returns the memory in one
	// step that the scheduler cannot preempt (tens of milliseconds after an
	// 18-locale load).
	defer borrowCores()()
	// Two collections when this process has compressed since the last release:
	// the first moves the pooled compressors (a brotli writer for a large
	// window holds tens of megabytes) to sync.Pool's victim cache, the second
	// frees them. With one, an 18-locale version kept 420 MB of them live, and
	// as RSS, until the heap next doubled. A swap whose bodies all came
	// compressed (a stored part and brotli) pools none, and the first
	// collection was 40 ms of marking two editions for nothing (BENCHMARKS.md
	// § Stop 44).
	if pooled.Swap(false) {
		runtime.GC()
	}
	debug.FreeOSMemory()
}

// CurrentEffort is the Effort Compress works at in this process, for a child
// process that compresses on its behalf to work at the same.
func CurrentEffort() Effort { return *effort.Load() }

// Gzipped is the body's gzip bytes as CompressGzip left them: made reports
// whether it ran, and gz is nil when gzip would not make the body smaller.
func (b *Body) Gzipped() (gz []byte, made bool) {
	c := b.enc.Load()
	if c == nil {
		return nil, false
	}
	if c.gzip != nil {
		gz = c.gzip.Bytes
	}
	return gz, true
}

// GzipETag is the ETag of the gzip Gzipped reports; "" when there is none.
func (b *Body) GzipETag() string {
	if c := b.enc.Load(); c != nil && c.gzip != nil {
		return c.gzip.ETag()
	}
	return ""
}

// NewGzippedBody is NewBody for bytes whose gzip another process made with
// CompressGzip (gz nil: not smaller, as Gzipped reports), with the ETags that
// process made of both (ETag, GzipETag; the latter for every gz): the body is then as CompressGzip
// would leave it here, and a later Compress adds brotli. The ETags are taken
// as they come, not made again: that process is this program, and hashing the
// bytes here was about half of the server's time reading a built version
// (BENCHMARKS.md § Stop 36). An ETag not of the form this program makes is an
// error.
func NewGzippedBody(b []byte, lang, etag string, gz []byte, gzETag string) (*Body, error) {
	// The errors give lengths, not the strings: a broken part's could be
	// megabytes.
	if !madeETag(etag) {
		return nil, fmt.Errorf("the body's ETag (%d bytes) is not one this program makes", len(etag))
	}
	if gz != nil && !madeETag(gzETag) {
		return nil, fmt.Errorf("the gzip's ETag (%d bytes) is not one this program makes", len(gzETag))
	}
	body := newBody(b, lang, etag)
	body.installTagged(nil, false, gz, gzETag, nil)
	return body, nil
}

// madeETag reports whether s has the form of an ETag newEncoded makes: etagSum
// bytes in unpadded base64url, quoted.
func madeETag(s string) bool {
	var sum [etagSum]byte
	n := len(s) - 2
	if n != base64.RawURLEncoding.EncodedLen(etagSum) || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	// The decoder skips newlines: a tag with one decodes to fewer bytes.
	got, err := base64.RawURLEncoding.Decode(sum[:], []byte(s[1:1+n]))
	return err == nil && got == etagSum
}
