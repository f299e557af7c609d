//go:build race

package mirror_test

// raceOn: under the race detector (make test-race) the mirror follows the
// trimmed sample versions only, not real captures.
const raceOn = true
