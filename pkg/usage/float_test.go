package usage

import (
	"encoding/json"
	"testing"
)

// Float reads a number as JSON.parse and encoding/json do: the nearest
// float64, exponents included (JavaScript writes a costUSD under 1e-6 as
// 5e-7), and 0 for what is not a number.
func TestLexerFloat(t *testing.T) {
	for _, in := range []string{"0.0123", "0.3", "1e-16", "5e-7", "2.5E-7", "1E3", "-2.5", "12",
		"1730000000.123456", "0.000012345678901234567", "3.0000000000000004", "123456789012345678901234567890"} {
		var want float64
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		l := NewLexer([]byte(in))
		if got := l.Float(); got != want {
			t.Errorf("Float(%s) = %v, want %v", in, got, want)
		}
	}
	for _, in := range []string{`"1.5"`, "null", "true", "{}"} {
		l := NewLexer([]byte(in))
		if got := l.Float(); got != 0 {
			t.Errorf("Float(%s) = %v, want 0", in, got)
		}
	}
}
