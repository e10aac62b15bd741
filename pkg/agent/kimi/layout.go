package kimi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"fmt"
	"github.com/sessctl/sessctl/pkg/session"
	"regexp"
	"strconv"
)

// rotationRe is kimi-cli's name for an older generation of context.jsonl:
// context_N.jsonl, written by Kimi itself when it compacts.
var rotationRe = regexp.MustCompile(`^context_(\d+)\.jsonl$`)

// RotationName implements rotation.Namer: kimi-cli names the generations of
// context.jsonl context_N.jsonl; other files rotate as sessctl names them.
func (Home) RotationName(base string, n int) (string, bool) {
	if base != "context.jsonl" {
		return "", false
	}
	return fmt.Sprintf("context_%d.jsonl", n), true
}

// RotationOf implements rotation.Namer. context_01.jsonl counts as 1, as in
// Kimi.
func (Home) RotationOf(name string) (string, int, bool) {
	m := rotationRe.FindStringSubmatch(name)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return "", 0, false
	}
	return "context.jsonl", n, true
}

// StoreVote implements cleanup.StoreRecognizer: a share dir holds kimi.json;
// ~/.kimi is Kimi's by name.
func (Home) StoreVote(dir string) session.Vote {
	if _, err := os.Lstat(filepath.Join(dir, "kimi.json")); err == nil {
		return session.Sure
	}
	if strings.TrimPrefix(filepath.Base(dir), ".") == "kimi" {
		return session.Likely
	}
	return session.NoVote
}

// SideTitle implements session.TitleSource: the custom_title of the
// session directory's state.json.
func (Home) SideTitle(s *session.Session) (string, string) {
	if s.Dir == "" {
		return "", ""
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "state.json"))
	if err != nil {
		return "", ""
	}
	var v struct {
		CustomTitle *string `json:"custom_title"`
	}
	if json.Unmarshal(b, &v) != nil || v.CustomTitle == nil {
		return "", ""
	}
	return *v.CustomTitle, "custom_title"
}
