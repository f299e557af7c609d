//go:build race

package api_test

// raceOn: under the race detector the operation walk asks for four locales, not
// 18; make test and make stress ask for all of them.
const raceOn = true
