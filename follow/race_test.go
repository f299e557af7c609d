//go:build race

package follow_test

// raceOn: under the race detector (make test-race) the mirror follows the
// trimmed sample versions only, not real captures, and TestSyncFaults syncs
// again after two of its faults, not each.
const raceOn = true
