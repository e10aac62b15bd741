//go:build !linux

package search

// readAhead does nothing here (see readahead_linux.go).
func readAhead(path string) {}
