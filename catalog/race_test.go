//go:build race

package catalog_test

// raceOn: under the race detector the tests of the data's contents take the
// trimmed sample (dataEdition).
const raceOn = true
