package representation

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/cores"
)

// Compression beside serving runs in a child process at the kernel's idle
// priority (SCHED_IDLE on Linux), the same executable started with
// childEnv set, not in the serving process.
//
// Why a process: on a small machine, compressing a new version's bodies takes
// CPU-seconds (brotli at quality 9 is most of it) that come out of the share
// of the requests and of the applications beside the service. Inside the
// serving process there is no priority to give that work: Go schedules every
// goroutine alike, and a runtime thread at a lower kernel priority stalls the
// whole process when the collector stops the world for it or when it holds a
// runtime lock (BENCHMARKS.md § Stop 23: a 178 ms p99). A process of its own
// shares nothing with the server but two pipes, and the kernel runs an idle-
// priority process only when no other wants the CPU, and takes the CPU back the
// moment one does. At 20,000 requests a second, brotli on both cores beside the
// server measured p99 0.68 ms at idle priority, 1.6 ms at nice 19 and 4.9 ms
// at the same priority (0.59–0.66 ms with nothing beside it; BENCHMARKS.md
// § Stop 25), and compressed as fast as at the same priority, since the cores
// were idle most of the time.
//
// The child compresses with the same code and the same Effort, so its bytes,
// and the ETags made from them, are the ones the server would have made
// (TestOffloadMatchesInProcess). A server compresses in-process as before when
// no child can be started, when it dies (what it had not sent back is
// compressed again here), while the server is idle (the child is then just
// more threads for the same cores), and for the gzip a swap waits for, after
// OffloadPatience: the child's share of a saturated machine is small, and a
// new version must go live.

// childEnv, when set, makes the process a compression child (ServeIfChild).
const childEnv = "REFDATA_COMPRESSION_CHILD"

// OffloadPatience is how long a swap's gzip is left to the child alone while
// requests come in before one in-process worker joins it (see each).
const OffloadPatience = 500 * time.Millisecond

// handshake is the child's first line: it proves that the executable is one
// that compresses (a test binary without the hook would run its tests instead).
const handshake = "refdata-compression/1\n"

// maxFrame bounds what either side reads in one frame: larger than any body a
// version renders (the 2 MB language=all lists), small enough that a corrupt
// length cannot make the reader allocate without bound.
const maxFrame = 1 << 28

// ServeIfChild makes the process a compression child when the parent started
// it as one: it compresses what arrives on standard input until that closes,
// then exits. Otherwise it returns at once. main and every TestMain of a
// package that serves call it first.
func ServeIfChild() {
	if os.Getenv(childEnv) == "" {
		return
	}
	cores.IdlePriority()
	// Compressing takes no more than the cores serving leaves free: what a
	// swap waits for is gzipped by the builder child, or by in-process
	// workers that join this child after OffloadPatience.
	cores.ChildBudget()
	if err := serveChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compression child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Offload makes this process compress bulk work (CompressAll, CompressGzipAll,
// CompressAndRelease) in a child process, started on first use. log receives
// the child's start and any failure (the work then goes on in-process).
func Offload(log *slog.Logger) {
	if os.Getenv(childEnv) != "" {
		return // a child never starts another
	}
	off.mu.Lock()
	defer off.mu.Unlock()
	off.enabled = true
	off.log = log
}

// StopOffload stops the child, if any; later bulk work is compressed in-process.
func StopOffload() {
	off.mu.Lock()
	c := off.c
	off.c, off.enabled = nil, false
	off.mu.Unlock()
	if c != nil {
		c.close()
	}
}

var off struct {
	mu      sync.Mutex
	enabled bool
	log     *slog.Logger
	c       *child
	active  int         // loops using c
	retire  *time.Timer // stops c once no loop has used it for childIdle
}

// childIdle is how long the child outlives its last loop. Between swaps the
// service is then one process: the child's compressors, tens of megabytes,
// would otherwise count against the server's memory for hours (RSS with
// the memo full is 1.94× the rendered bytes, 2.04× with an idle child's 21 MB;
// BENCHMARKS.md § Stop 25). Starting one takes milliseconds.
var childIdle = 10 * time.Second

// offloader returns the running child, starting one if offloading is enabled
// and none runs; nil when work stays in-process. A caller given a child calls
// doneWith when its loop ends.
func offloader() *child {
	off.mu.Lock()
	defer off.mu.Unlock()
	c := startedChild()
	if c != nil {
		off.active++
	}
	return c
}

// doneWith ends a loop's use of the child; the last one arms its retirement.
func doneWith() {
	off.mu.Lock()
	defer off.mu.Unlock()
	off.active--
	if off.active > 0 {
		return
	}
	if off.retire != nil {
		off.retire.Stop()
	}
	off.retire = time.AfterFunc(childIdle, func() {
		off.mu.Lock()
		c := off.c
		if off.active > 0 || c == nil {
			off.mu.Unlock()
			return
		}
		off.c = nil
		off.mu.Unlock()
		c.close()
	})
}

func startedChild() *child {
	if !off.enabled {
		return nil
	}
	if off.c != nil && !off.c.failed() {
		return off.c
	}
	if off.c != nil {
		off.c.close()
		off.c = nil
	}
	c, err := startChild()
	if err != nil {
		if off.log != nil {
			off.log.Warn("cannot start the compression child; compressing in-process", "err", err)
		}
		return nil
	}
	if off.log != nil {
		off.log.Info("compression child started", "pid", c.cmd.Process.Pid)
	}
	off.c = c
	return c
}

// A child is the parent's end of a compression child: requests go out on its
// standard input, answers come back on its standard output, matched by
// sequence number (the child answers in the order it finishes).
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	wmu  sync.Mutex // one frame at a time
	w    *bufio.Writer
	seq  atomic.Uint32
	pmu  sync.Mutex
	pend map[uint32]*job // sent, not yet answered
	err  error           // set once, under pmu: the child is unusable
	dead chan struct{}   // closed when err is set

	stopped  atomic.Bool   // close was called: its failure is not news
	exited   chan struct{} // closed when close has waited for the process
	answered atomic.Int64  // bodies the child compressed (tests)
}

// A job is one body sent to the child.
type job struct {
	b      *Body
	old    *compressed
	brotli bool
	done   func()
}

func startChild() (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the executable: %w", err)
	}
	cmd, in, out, err := cores.StartChild(exe, childEnv, true)
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, w: bufio.NewWriterSize(in, 64<<10), pend: map[uint32]*job{}, dead: make(chan struct{}), exited: make(chan struct{})}
	r := bufio.NewReaderSize(out, 64<<10)
	hello := make(chan error, 1)
	go func() {
		line, err := r.ReadString('\n')
		if err == nil && line != handshake {
			err = errors.New("the executable does not speak the compression protocol")
		}
		hello <- err
	}()
	select {
	case err = <-hello:
	case <-time.After(10 * time.Second):
		err = errors.New("no handshake within 10 s")
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("compression child: %w", err)
	}
	go c.read(r)
	return c, nil
}

func (c *child) failed() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// fail marks the child unusable and releases every job still waiting for it
// (uncompressed: the caller compresses them in-process).
func (c *child) fail(err error) {
	c.pmu.Lock()
	if c.err != nil {
		c.pmu.Unlock()
		return
	}
	c.err = err
	close(c.dead)
	pend := c.pend
	c.pend = map[uint32]*job{}
	c.pmu.Unlock()
	for _, j := range pend {
		j.done()
	}
	if log := offloadLog(); log != nil && !c.stopped.Load() {
		log.Warn("compression child failed; compressing in-process", "err", err)
	}
}

func offloadLog() *slog.Logger {
	off.mu.Lock()
	defer off.mu.Unlock()
	return off.log
}

func (c *child) close() {
	c.stopped.Store(true)
	c.wmu.Lock()
	_ = c.in.Close()
	c.wmu.Unlock()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	c.fail(errors.New("stopped"))
	close(c.exited)
}

// send writes one job's request: seq, flags (1 gzip, 2 brotli), the Effort,
// the body.
func (c *child) send(j *job, e Effort) error {
	seq := c.seq.Add(1)
	c.pmu.Lock()
	if err := c.err; err != nil {
		c.pmu.Unlock()
		j.done()
		return err
	}
	c.pend[seq] = j
	c.pmu.Unlock()
	var flags byte
	if j.old == nil {
		flags |= 1
	}
	if j.brotli {
		flags |= 2
	}
	var h [11]byte
	binary.BigEndian.PutUint32(h[0:], seq)
	h[4] = flags
	h[5] = byte(e.Gzip)
	h[6] = byte(e.Brotli)
	binary.BigEndian.PutUint32(h[7:], uint32(len(j.b.JSON)))
	c.wmu.Lock()
	_, err := c.w.Write(h[:])
	if err == nil {
		_, err = c.w.Write(j.b.JSON)
	}
	if err == nil {
		err = c.w.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		c.fail(fmt.Errorf("write to the compression child: %w", err))
	}
	return err
}

// read takes the child's answers: seq, then gzip and brotli as length and
// bytes (length 0: not asked for).
func (c *child) read(r *bufio.Reader) {
	for {
		var h [4]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			c.fail(fmt.Errorf("read from the compression child: %w", err))
			return
		}
		seq := binary.BigEndian.Uint32(h[:])
		gz, err := readFrame(r)
		var br []byte
		if err == nil {
			br, err = readFrame(r)
		}
		if err != nil {
			c.fail(fmt.Errorf("read from the compression child: %w", err))
			return
		}
		c.pmu.Lock()
		j := c.pend[seq]
		delete(c.pend, seq)
		c.pmu.Unlock()
		if j == nil {
			c.fail(fmt.Errorf("the compression child answered request %d, which is not pending", seq))
			return
		}
		if (j.old == nil) != (gz != nil) || j.brotli != (br != nil) {
			c.fail(fmt.Errorf("the compression child answered request %d with other encodings than asked", seq))
			j.done()
			return
		}
		j.b.install(j.old, j.brotli, gz, br)
		c.answered.Add(1)
		j.done()
	}
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n == 0 {
		return nil, nil
	}
	if n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// inFlight is how many bodies one loop keeps at the child: enough to keep
// its workers and the pipes busy, few enough that the in-process workers
// that may join find work left.
func inFlight() int { return 2 * runtime.NumCPU() }

// feed sends bodies[next...] to the child until none are left or the child
// fails, and returns when every body it sent has been answered.
func (c *child) feed(bodies []*Body, next *atomic.Int64, brotli bool) {
	e := *effort.Load()
	slots := make(chan struct{}, inFlight())
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-c.dead:
			return
		}
		i := int(next.Add(1)) - 1
		if i >= len(bodies) {
			return
		}
		b := bodies[i]
		old := b.enc.Load()
		if old != nil && (!old.partial || !brotli) {
			<-slots
			continue
		}
		if len(b.JSON) < minCompress {
			b.compress(brotli) // nothing to compress: no CPU
			<-slots
			continue
		}
		wg.Add(1)
		j := &job{b: b, old: old, brotli: brotli, done: func() { <-slots; wg.Done() }}
		if c.send(j, e) != nil {
			return // fail released j
		}
	}
}

// serveChild is the child's loop: read requests, compress them on every
// core, write the answers as they finish.
func serveChild(in io.Reader, out io.Writer) error {
	w := bufio.NewWriterSize(out, 64<<10)
	if _, err := w.WriteString(handshake); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	type request struct {
		seq    uint32
		gzip   bool
		brotli bool
		effort Effort
		body   []byte
	}
	type answer struct {
		seq    uint32
		gz, br []byte
	}
	requests := make(chan request)
	answers := make(chan answer, runtime.GOMAXPROCS(0))
	var workers sync.WaitGroup
	var busy atomic.Int64 // requests read and not yet answered
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for q := range requests {
				z := compressorFor(q.effort)
				var a answer
				a.seq = q.seq
				if q.gzip {
					a.gz = z.gzip(q.body)
				}
				if q.brotli {
					a.br = z.brotli(q.body)
				}
				z.release()
				answers <- a
			}
		})
	}
	writeErr := make(chan error, 1)
	go func() {
		var err error
		put := func(b []byte) {
			var h [4]byte
			binary.BigEndian.PutUint32(h[:], uint32(len(b)))
			if err == nil {
				_, err = w.Write(h[:])
			}
			if err == nil {
				_, err = w.Write(b)
			}
		}
		for a := range answers {
			var h [4]byte
			binary.BigEndian.PutUint32(h[:], a.seq)
			if err == nil {
				_, err = w.Write(h[:])
			}
			put(a.gz)
			put(a.br)
			if len(answers) == 0 && err == nil {
				err = w.Flush()
			}
			busy.Add(-1)
		}
		writeErr <- err
	}()
	// Between swaps, give back what compressing held: the pooled brotli
	// writers are tens of megabytes (as CompressAndRelease does in-process).
	stopRelease := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var last int64 = -1
		for {
			select {
			case <-stopRelease:
				return
			case <-t.C:
			}
			if n := served.Load(); busy.Load() == 0 && n != last {
				last = n
				runtime.GC()
				runtime.GC()
				debug.FreeOSMemory()
			}
		}
	}()
	r := bufio.NewReaderSize(in, 64<<10)
	var readErr error
	for {
		var h [11]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		n := binary.BigEndian.Uint32(h[7:])
		if n > maxFrame {
			readErr = fmt.Errorf("request of %d bytes", n)
			break
		}
		q := request{seq: binary.BigEndian.Uint32(h[0:]), gzip: h[4]&1 != 0, brotli: h[4]&2 != 0,
			effort: Effort{Gzip: int(int8(h[5])), Brotli: int(h[6])}, body: make([]byte, n)}
		if _, err := io.ReadFull(r, q.body); err != nil {
			readErr = err
			break
		}
		busy.Add(1)
		served.Add(1)
		requests <- q
	}
	close(requests)
	workers.Wait()
	close(answers)
	close(stopRelease)
	if err := <-writeErr; err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	return w.Flush()
}

// served counts the child's requests, so it releases memory once per burst.
var served atomic.Int64
