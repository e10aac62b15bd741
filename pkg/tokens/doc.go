// Package tokens counts tokens: exactly, with tiktoken's cl100k_base and
// o200k_base byte-pair encodings, and approximately, with the character
// heuristics the agents themselves use. It also knows the context windows
// of the common models and the budgets and compaction thresholds derived
// from them.
//
// The three kinds of numbers must not be mixed (see docs/tokens.md and
// shared/formats/tokens.md): a Counter gives an exact count only for models
// that really use its encoding (EncodingForModel says which); for Claude,
// Kimi and GLM models it is an estimate, and the heuristics (CodexApprox,
// KimiApprox, CJKApprox) are estimates by definition.
//
// A Counter gives the same tokens as tiktoken's encode_ordinary, at about ten
// times the speed of github.com/pkoukk/tiktoken-go: the splitting regexp of
// each encoding is a hand-written scanner instead of a backtracking regexp.
// The rank tables are compiled into the binary
// (github.com/pkoukk/tiktoken-go-loader); nothing is downloaded.
package tokens
