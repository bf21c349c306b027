package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// After unmapHugeText every read-only file mapping of the executable carries the no-huge-page flag ("nh" in
// smaps' VmFlags) and maps no 2 MB piece of the file.
func TestUnmapHugeText_MarksTheExecutablesReadOnlyMappings(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("a kernel without transparent huge pages: nothing to mark")
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip("no /proc/self/exe:", err)
	}
	before, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	ours := map[string]bool{} // the mappings it acts on (a relocated RELRO one of a PIE test binary is not)
	for _, r := range readOnlyFileRanges(before, exe) {
		ours[fmt.Sprintf("%08x-%08x", r[0], r[1])] = true // smaps pads addresses to 8 digits
	}
	unmapHugeText()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var perms string
	var readOnly, marked int
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && len(f[1]) == 4:
			perms = ""
			if f[5] == exe && ours[f[0]] {
				perms = f[1]
			}
		case perms == "" || strings.Contains(perms, "w"):
		case f[0] == "FilePmdMapped:" && f[1] != "0":
			t.Errorf("a read-only mapping (%s) of the executable maps %s kB in 2 MB pieces", perms, f[1])
		case f[0] == "VmFlags:":
			readOnly++
			if strings.Contains(line, " nh") {
				marked++
			}
		}
	}
	if readOnly == 0 || marked != readOnly {
		t.Fatalf("%d of %d read-only mappings of %s marked no-huge-page", marked, readOnly, exe)
	}
}

func TestReadOnlyFileRanges_SkipsWritableAndRelocatedMappings(t *testing.T) {
	smaps := `00400000-00500000 r-xp 00000000 fe:00 12 /bin/tg
Rss:                 528 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00500000-00600000 r--p 00100000 fe:00 12 /bin/tg
Anonymous:             0 kB
VmFlags: rd mr mw me
00600000-00601000 r--p 00200000 fe:00 12 /bin/tg
Anonymous:             4 kB
VmFlags: rd mr mw me ac
00601000-00700000 rw-p 00201000 fe:00 12 /bin/tg
Anonymous:           220 kB
VmFlags: rd wr mr mw me ac
00700000-00800000 r--p 00000000 fe:00 13 /lib/other.so
Anonymous:             0 kB
VmFlags: rd mr mw me
7f0000000000-7f0000001000 r--s 00000000 fe:00 12 /bin/tg
Anonymous:             0 kB
VmFlags: rd mr me ms
`
	got := readOnlyFileRanges([]byte(smaps+`00800000-00900000 r--p 00300000 fe:00 12 /bin/tg
Anonymous:             0 kB
Swap:                  8 kB
VmFlags: rd mr mw me ac
`), "/bin/tg")
	want := [][2]uint64{{0x400000, 0x500000}, {0x500000, 0x600000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ranges %x, want %x (code and read-only data; not the relocated, swapped, writable, shared or other files)", got, want)
	}
}
