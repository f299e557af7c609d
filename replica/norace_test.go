//go:build !race

package replica_test

const raceOn = false
