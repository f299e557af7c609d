//go:build !race

package follow_test

const raceOn = false
