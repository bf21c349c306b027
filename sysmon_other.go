//go:build !unix

package main

// quietSysmon is Unix-only (see sysmon_unix.go).
func quietSysmon() {}
