//go:build !race

package relay_test

// raceEnabled: the race detector's shadow memory makes RSS measurements meaningless.
const raceEnabled = false
