package session

// UseReference switches Unmarshal to encoding/json (on) or back to the fast
// decoder, for the differential tests; tests that call it must not run in
// parallel.
func UseReference(on bool) { reference = on }
