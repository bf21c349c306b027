//go:build !linux

package main

// unmapHugeText is Linux-only (see exemap_linux.go).
func unmapHugeText() {}
