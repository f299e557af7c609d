//go:build !race

package mirror_test

const raceOn = false
