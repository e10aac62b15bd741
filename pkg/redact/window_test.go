package redact

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
)

// TestWindowsFindTheSameMatches: the rules scanned in windows find exactly
// the matches a scan of the whole text finds, on the sample sessions'
// strings, the fake secrets, and random texts made of the pieces the
// patterns care about (keywords in both cases, operators, quotes, blanks,
// escapes, base64, and the characters (?i) folds to ASCII letters).
func TestWindowsFindTheSameMatches(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	var windowed []*Rule
	for _, r := range d.Rules() {
		if r.window != nil {
			windowed = append(windowed, r)
		}
	}
	if len(windowed) != 2 {
		t.Fatalf("%d rules with windows, want 2 (generic-api-key and env-assignment)", len(windowed))
	}
	texts := corpus(t, 128<<10)
	pieces := []string{"key", "KEY", "Api", "API", "api", "token", "TOKEN", "secret", "SECRET", "password", "PASSWORD", "passwd", "auth", "access",
		"credential", "creds", "pass", "pwd", "PWD", "PRIVATE_KEY", "ACCESS_KEY", "export ", "=", "==", ":", "::=", "=>", "||", "?=", ",", ">", "\"", "'", "`",
		" ", "\t", "\n", "\r\n", `\n`, `\r`, ";", "#", "&", "|", "_", ".", "-", "+", "/", "\u212a", "\u017f", "é",
		fakesecret.Draw(fakesecret.Base64, 12, 1), fakesecret.Draw(fakesecret.Alnum, 24, 2), fakesecret.Draw(fakesecret.Base64, 90, 3), "abc", "X9", "0"}
	rnd := rand.New(rand.NewSource(1))
	n, least := 8000, 500
	if raceEnabled {
		n, least = 1000, 50
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		for n := rnd.Intn(40); n > 0; n-- {
			b.WriteString(pieces[rnd.Intn(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	compared := 0
	for _, s := range texts {
		for _, r := range windowed {
			got := r.matches(s)
			want := r.Regex.FindAllStringSubmatchIndex(s, -1)
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			compared++
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %q:\n windows %v\n whole   %v", r.ID, s, got, want)
			}
		}
	}
	t.Logf("%d texts, %d with matches compared", len(texts), compared)
	if compared < least {
		t.Errorf("only %d texts with matches: the random texts lost their point", compared)
	}
}
