//go:build race

package replica_test

// raceOn: the race detector slows imports and builds several times over, so the
// heaviest tests do fewer rounds of the same checks under it (CI runs -race).
const raceOn = true
