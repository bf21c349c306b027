package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// unmapHugeText keeps the kernel from mapping this binary's code and read-only data in 2 MB pieces. A binary
// whose page cache holds 2 MB folios (one the linker just wrote, say) is mapped a whole folio per fault, and
// each such fault adds 2 MB of resident memory where a small page would add 64 KB: an idle node read 41.8 MB
// instead of 37.7. It marks the read-only private mappings of the executable MADV_NOHUGEPAGE and drops what is
// mapped of them; those pages are clean file pages and fault back in from the page cache, small, when next
// used. A read-only mapping holding pages of its own, in memory or swapped (a RELRO segment the dynamic loader
// wrote relocations into, in a PIE or externally linked build), is left alone: dropping them would undo the
// relocations. Errors
// are ignored: this only trims memory.
func unmapHugeText() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, r := range readOnlyFileRanges(smaps, exe) {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(r[0]), uintptr(r[1]-r[0]), syscall.MADV_NOHUGEPAGE)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(r[0]), uintptr(r[1]-r[0]), syscall.MADV_DONTNEED)
	}
}

// readOnlyFileRanges are the [start, end) addresses of path's read-only private mappings in smaps that hold
// no page of their own (Anonymous and Swap 0 kB).
func readOnlyFileRanges(smaps []byte, path string) [][2]uint64 {
	var out [][2]uint64
	var from, to uint64 // the current mapping, while it qualifies
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && len(f[1]) == 4 && strings.Contains(f[0], "-"): // a mapping's header
			from, to = 0, 0
			if len(f) < 6 || f[5] != path || strings.Contains(f[1], "w") || !strings.HasSuffix(f[1], "p") {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil && b > a {
				from, to = a, b
			}
		case to == 0:
		case (f[0] == "Anonymous:" || f[0] == "Swap:") && len(f) > 1 && f[1] != "0":
			from, to = 0, 0 // pages written after mapping (relocations), in memory or swapped: not ours to drop
		case f[0] == "VmFlags:": // the last line of a mapping's block
			out = append(out, [2]uint64{from, to})
			from, to = 0, 0
		}
	}
	return out
}
