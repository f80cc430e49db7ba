package scale

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTimes are the CPU time used so far by the test process (Tollgate's manager runs in it,
// beside the test's own clients) and by the control plane it started: kube-apiserver and etcd,
// its child processes.
type cpuTimes struct{ self, apiServer, etcd time.Duration }

// cpuNow reads the CPU times; a process it cannot read counts as zero.
func cpuNow() cpuTimes {
	var out cpuTimes
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		out.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		name, ppid, cpu, ok := procStat(p)
		if !ok || ppid != os.Getpid() {
			continue
		}
		switch name {
		case "kube-apiserver":
			out.apiServer += cpu
		case "etcd":
			out.etcd += cpu
		}
	}
	return out
}

// procStat reads a process's name, parent and CPU time (user and system) from its stat file.
func procStat(path string) (name string, ppid int, cpu time.Duration, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, 0, false
	}
	// After the name: state, ppid, ... utime (the 12th), stime (the 13th).
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 13 {
		return "", 0, 0, false
	}
	ppid, err1 := strconv.Atoi(fields[1])
	utime, err2 := strconv.ParseInt(fields[11], 10, 64)
	stime, err3 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", 0, 0, false
	}
	return s[open+1 : closing], ppid, time.Duration(utime+stime) * clockTick, true
}

// sub is the CPU time used between c and later.
func (c cpuTimes) sub(later cpuTimes) cpuTimes {
	return cpuTimes{self: later.self - c.self, apiServer: later.apiServer - c.apiServer, etcd: later.etcd - c.etcd}
}
