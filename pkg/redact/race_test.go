//go:build race

package redact

// raceEnabled: the race detector slows regexp scans tenfold; the tests
// that compare scans over many texts compare fewer under it.
const raceEnabled = true
