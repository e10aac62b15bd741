//go:build !race && heavy

package main

const raceEnabled = false
