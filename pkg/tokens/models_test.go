package tokens

import "testing"

func TestEncodingForModel(t *testing.T) {
	tests := []struct {
		model string
		enc   Encoding
		exact bool
	}{
		{"gpt-4o", O200kBase, true},
		{"gpt-4o-mini-2024-07-18", O200kBase, true},
		{"chatgpt-4o-latest", O200kBase, true},
		{"gpt-4.1", O200kBase, true},
		{"gpt-4.1-2025-04-14", O200kBase, true},
		{"gpt-5", O200kBase, true},
		{"gpt-5.3-codex", O200kBase, true},
		{"GPT-5-Codex", O200kBase, true},
		{"openai/gpt-5-mini", O200kBase, true},
		{"o1", O200kBase, true},
		{"o3-mini", O200kBase, true},
		{"o4-mini-2025-04-16", O200kBase, true},
		{"codex-mini-latest", O200kBase, true},
		{"gpt-oss-120b", O200kBase, true},
		{"gpt-4", Cl100kBase, true},
		{"gpt-4-turbo", Cl100kBase, true},
		{"gpt-4-32k-0613", Cl100kBase, true},
		{"gpt-3.5-turbo", Cl100kBase, true},
		{"gpt-35-turbo", Cl100kBase, true},
		{"text-embedding-3-small", Cl100kBase, true},
		{"text-embedding-ada-002", Cl100kBase, true},
		{"claude-opus-4-8", O200kBase, false},
		{"claude-sonnet-4-5[1m]", O200kBase, false},
		{"kimi-for-coding", O200kBase, false},
		{"kimi-k2-0905-preview", O200kBase, false},
		{"glm-4.6", O200kBase, false},
		{"o30", O200kBase, false},
		{"gpt-4x", O200kBase, false},
		{"", O200kBase, false},
		{"llama-3.1-70b", O200kBase, false},
	}
	for _, tt := range tests {
		enc, exact := EncodingForModel(tt.model)
		if enc != tt.enc || exact != tt.exact {
			t.Errorf("EncodingForModel(%q) = %s, %t; want %s, %t", tt.model, enc, exact, tt.enc, tt.exact)
		}
	}
}

func TestContextWindow(t *testing.T) {
	tests := []struct {
		model  string
		window int
		known  bool
	}{
		{"claude-opus-4-8", 200_000, true},
		{"claude-sonnet-4-5-20250929", 200_000, true},
		{"claude-opus-4-8[1m]", 1_000_000, true},
		{"claude-opus-5-5", 1_000_000, true},
		{"anthropic/claude-opus-5-5", 1_000_000, true},
		{"claude-opus-50", 200_000, true},
		{"Claude-Sonnet-4-5[1M]", 1_000_000, true},
		{"us.anthropic.claude-3-5-sonnet-20241022-v2:0", 200_000, true},
		{"opus", 200_000, true},
		{"gpt-5", 258_400, true},
		{"gpt-5.3-codex", 258_400, true},
		{"gpt-4.1", 1_047_576, true},
		{"gpt-4.1-mini", 1_047_576, true},
		{"gpt-4o", 128_000, true},
		{"o3", 200_000, true},
		{"o4-mini", 200_000, true},
		{"kimi-for-coding", 262_144, true},
		{"kimi-k2-turbo-preview", 262_144, true},
		{"moonshotai/kimi-k2-instruct", 262_144, true},
		{"moonshot-v1-8k", 8_192, true},
		{"moonshot-v1-128k", 131_072, true},
		{"glm-4.6", 200_000, true},
		{"gpt-4", 200_000, false},
		{"mystery-model", 200_000, false},
		{"", 200_000, false},
	}
	for _, tt := range tests {
		w, known := ContextWindow(tt.model)
		if w != tt.window || known != tt.known {
			t.Errorf("ContextWindow(%q) = %d, %t; want %d, %t", tt.model, w, known, tt.window, tt.known)
		}
	}
}

func TestUsableBudget(t *testing.T) {
	// The examples of tokens.md §1.
	for window, want := range map[int]int{
		200_000: 150_000, 1_000_000: 950_000, 258_400: 208_400, 128_000: 78_000,
		32_000: 25_600, 50_000: 40_000, 50_001: 1, 0: 0,
	} {
		if got := UsableBudget(window); got != want {
			t.Errorf("UsableBudget(%d) = %d, want %d", window, got, want)
		}
	}
}
