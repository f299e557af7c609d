//go:build race

package mirror_test

// raceOn: under the race detector (make test-race) the syncs of real captures
// take two versions, not three (make test three, make stress all 15), and the
// mirror follows the trimmed sample versions.
const raceOn = true
