//go:build !race

package catalog_test

const raceOn = false
