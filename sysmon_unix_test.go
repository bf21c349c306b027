//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The test binary stands in for tollgate: run as a helper it calls quietSysmon and prints its pid and GODEBUG,
// once before and (when re-executed) once after.
func TestQuietSysmon_ReexecsOnceWithSchedtrace(t *testing.T) {
	if os.Getenv("TOLLGATE_SYSMON_HELPER") == "1" {
		fmt.Printf("pid=%d GODEBUG=%q\n", os.Getpid(), os.Getenv("GODEBUG"))
		quietSysmon()
		os.Exit(0)
	}
	for _, tc := range []struct {
		name, env string // env: GODEBUG's value, "-" for unset
		want      []string
	}{
		{"unset", "-", []string{``, sysmonSetting}},
		{"empty", "", []string{``, sysmonSetting}},
		{"others kept", "madvdontneed=1", []string{"madvdontneed=1", "madvdontneed=1," + sysmonSetting}},
		{"own schedtrace kept", "schedtrace=0", []string{"schedtrace=0"}},
		{"own schedtrace among others", "gctrace=0,schedtrace=5000", []string{"gctrace=0,schedtrace=5000"}},
		// The runtime trims nothing: " schedtrace=0" is a key it does not know, so ours is still added.
		{"spaced schedtrace is not the runtime's", "gctrace=0, schedtrace=0", []string{"gctrace=0, schedtrace=0", "gctrace=0, schedtrace=0," + sysmonSetting}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestQuietSysmon_ReexecsOnceWithSchedtrace$")
			cmd.Env = append(withoutVar(os.Environ(), "GODEBUG"), "TOLLGATE_SYSMON_HELPER=1")
			if tc.env != "-" {
				cmd.Env = append(cmd.Env, "GODEBUG="+tc.env)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("want %d runs, got %q", len(tc.want), lines)
			}
			pid, _, _ := strings.Cut(lines[0], " ")
			for i, l := range lines {
				if want := fmt.Sprintf("%s GODEBUG=%q", pid, tc.want[i]); l != want {
					t.Errorf("run %d: %q, want %q (same pid: exec, not a child)", i, l, want)
				}
			}
		})
	}
}

func TestHasSetting(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"", false}, {"schedtrace=1", true}, {"a=1,schedtrace=0", true}, {"schedtrace=", true},
		{" schedtrace=0", false}, {"schedtrace", false}, {"scheddetail=1", false}, {"xschedtrace=1", false},
		{"schedtracex=1", false}, {",,", false},
	} {
		if got := hasSetting(tc.v, "schedtrace"); got != tc.want {
			t.Errorf("hasSetting(%q) = %v", tc.v, got)
		}
	}
}
