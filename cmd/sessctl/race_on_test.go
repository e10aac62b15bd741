//go:build race && heavy

package main

// raceEnabled: the test binary is built with -race (make test-heavy;
// sigint_test.go).
const raceEnabled = true
