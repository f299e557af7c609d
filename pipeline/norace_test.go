//go:build !race

package pipeline_test

const raceOn = false
