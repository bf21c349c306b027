//go:build !race

package apptest

// RaceEnabled: this binary runs under the race detector.
const RaceEnabled = false
