//go:build race

package main

// raceEnabled: the test binary is built with -race (make test).
const raceEnabled = true
