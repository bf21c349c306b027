//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
)

// quietSysmon re-executes this binary, once, at start, with GODEBUG's schedtrace set to its largest period,
// unless GODEBUG already sets schedtrace as the runtime reads it (schedtrace=0 keeps the runtime's default).
//
// Why: the Go runtime's monitor thread (sysmon) sleeps deeply while every P is idle, and the first system call
// after that wakes it (a futex wake on that call's path) and resets it to checking every 20 µs for the next
// millisecond or more. A gateway between streams whose chunks come a few milliseconds apart goes idle and
// busy again hundreds of times a second, so its monitor spun at 20 µs almost all the time: 17 % of the node's
// CPU samples in a profile of the bench's paced streams (runtime.sysmon, its usleep and futex calls). With
// schedtrace set, the monitor never sleeps deeply (the runtime keeps it awake to print on time, see
// runtime.sysmon), so nothing wakes it, and it backs off to every 10 ms as it does in a steadily busy process
// (2 % of the samples in the same profile). Paced A/B runs: 15–20 % less CPU per stream, the path gap
// unchanged; ~0.1× of the proxy's less added latency at concurrency 1. What it gives up, by the runtime's code:
// a P held by a long system call is taken back within 10 ms rather than within ~20 µs after a wake-up, the
// same as in any steadily busy process.
//
// The period is the largest the runtime takes (2³¹−1 ms, 24.8 days): by the runtime's code it prints one
// scheduler line to stderr every 24.8 days, and one at start when the machine has been up longer than that.
// Errors leave the process as it is: this only saves CPU.
func quietSysmon() {
	cur := os.Getenv("GODEBUG")
	if hasSetting(cur, "schedtrace") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	v := sysmonSetting
	if cur != "" {
		v = cur + "," + sysmonSetting
	}
	env := append(withoutVar(os.Environ(), "GODEBUG"), "GODEBUG="+v)
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure
}

const sysmonSetting = "schedtrace=2147483647"

// hasSetting says whether a GODEBUG value (comma-separated key=value) names key, split as the runtime splits
// it: no spaces trimmed (" schedtrace=0" names a key the runtime does not know), a field without "=" ignored.
// A field naming key with any value, even one the runtime cannot read, is the operator's say and is left.
func hasSetting(godebug, key string) bool {
	for kv := range strings.SplitSeq(godebug, ",") {
		if k, _, ok := strings.Cut(kv, "="); ok && k == key {
			return true
		}
	}
	return false
}

// withoutVar is env without the variable name.
func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}
