//go:build race

package router_test

// raceOn: under the race detector the operation walk serves the trimmed sample
// (see walked); make test and make stress serve the full one.
const raceOn = true
