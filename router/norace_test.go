//go:build !race

package router_test

const raceOn = false
