//go:build !race

package live_test

const raceOn = false
