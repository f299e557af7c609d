package builder

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// A watch measures the CPU a child process gets, from /proc/PID/stat.
type watch struct {
	pid   int
	at    time.Time
	ticks int64 // user and system time, in clock ticks
}

// userHZ is the unit of /proc's times: fixed at 100 for user space.
const userHZ = 100

func newWatch(pid int) *watch {
	w := &watch{pid: pid, at: time.Now()}
	w.ticks, _ = cpuTicks(pid)
	return w
}

// starved reports whether the child used less than starvedShare of a core
// since the last call; false when its time cannot be read.
func (w *watch) starved() bool {
	ticks, ok := cpuTicks(w.pid)
	now := time.Now()
	used := float64(ticks-w.ticks) / userHZ
	elapsed := now.Sub(w.at).Seconds()
	w.ticks, w.at = ticks, now
	return ok && elapsed > 0 && used < starvedShare*elapsed
}

// cpuTicks reads utime and stime, fields 14 and 15 of /proc/PID/stat; the
// second field, the command, is in parentheses and may hold spaces.
func cpuTicks(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return u + s, true
}
