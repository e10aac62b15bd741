package usage

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// ByModel is usage by model name: a list sorted by name, written in JSON
// as the object a map[string]session.Usage gives (keys in byte order). A
// session has a model or two; a map of them took about 600 bytes a session
// (a Go map allocates a group of eight slots), which 100,000 sessions made
// 60 MB.
type ByModel []ModelUsage

// ModelUsage is the usage of one model.
type ModelUsage struct {
	Model string
	session.Usage
}

// Get returns the usage of model m (zero when none).
func (b ByModel) Get(m string) session.Usage {
	if i, ok := b.find(m); ok {
		return b[i].Usage
	}
	return session.Usage{}
}

func (b ByModel) find(m string) (int, bool) {
	return slices.BinarySearchFunc(b, m, func(e ModelUsage, m string) int { return strings.Compare(e.Model, m) })
}

// add adds u to model m.
func (b *ByModel) add(m string, u session.Usage) {
	i, ok := b.find(m)
	if ok {
		(*b)[i].Usage = (*b)[i].Usage.Add(u)
		return
	}
	*b = slices.Insert(*b, i, ModelUsage{m, u})
}

// Map returns b as a map.
func (b ByModel) Map() map[string]session.Usage {
	m := make(map[string]session.Usage, len(b))
	for _, e := range b {
		m[e.Model] = e.Usage
	}
	return m
}

// MarshalJSON writes b as an object, as encoding/json writes a map (keys
// sorted; the encoder applies its own HTML escaping setting to the whole).
func (b ByModel) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	out := []byte{'{'}
	for i, e := range b {
		if i > 0 {
			out = append(out, ',')
		}
		for _, v := range []any{e.Model, e.Usage} {
			buf.Reset()
			if err := enc.Encode(v); err != nil {
				return nil, err
			}
			out = append(out, buf.Bytes()...)
			if v == any(e.Model) {
				out = append(out, ':')
			}
		}
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the object MarshalJSON writes.
func (b *ByModel) UnmarshalJSON(data []byte) error {
	var m map[string]session.Usage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*b = nil
	for k, u := range m {
		b.add(k, u)
	}
	return nil
}
