package main

import (
	"os"
	"strings"
	"testing"
)

// After unmapHugeText every read-only mapping of the executable carries the no-huge-page flag ("nh" in
// smaps' VmFlags) and maps no 2 MB piece of the file; the writable data mapping is left alone.
func TestUnmapHugeText_MarksTheExecutablesReadOnlyMappings(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("a kernel without transparent huge pages: nothing to mark")
	}
	unmapHugeText()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip("no /proc/self/exe:", err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	var perms string
	var readOnly, marked int
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && len(f[1]) == 4:
			perms = ""
			if f[5] == exe {
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
