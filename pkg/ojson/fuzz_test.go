package ojson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzJSONRoundTrip: whatever valid JSON the parser accepts, both writers
// produce valid JSON with the same meaning (and the verbatim writer the
// same bytes).
func FuzzJSONRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"role": "_checkpoint", "id": 0}`,
		`{"a":[1,2.5e3,-0,true,false,null],"b":{"c":"\u00e9\ud83d\ude00\n\t\"\\"}}`,
		`"\u2028<>&\u007f"`, `[]`, `{}`, `{"k":"` + "\x01" + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		v, err := Parse(b)
		if err != nil {
			t.Fatalf("valid JSON rejected: %q: %v", b, err)
		}
		if got := Compact.Encode(v); string(got) != string(trimSpace(b)) {
			t.Fatalf("verbatim writer changed %q to %q", b, got)
		}
		want, _ := decodeNumbers(b)
		for _, st := range []Style{Fresh, Python} {
			out := st.Encode(v)
			got, err := decodeNumbers(out)
			if err != nil {
				t.Fatalf("%+v wrote invalid JSON %q for %q: %v", st, out, b, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v changed the meaning of %q: %q", st, b, out)
			}
		}
		// a clone writes the same, verbatim and fresh
		c := v.Clone()
		if !bytes.Equal(Compact.Encode(c), Compact.Encode(v)) || !bytes.Equal(Fresh.Encode(c), Fresh.Encode(v)) {
			t.Fatalf("clone of %q writes differently", b)
		}
	})
}

// decodeNumbers decodes JSON keeping numbers as their text.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
