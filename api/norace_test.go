//go:build !race

package api_test

const raceOn = false
