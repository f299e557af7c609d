//go:build race

package catalog_test

// raceOn: under the race detector the writer's comparison with encoding/json
// takes the trimmed sample; it runs on one goroutine, so the detector finds
// nothing in the full data that it would not in the trimmed.
const raceOn = true
