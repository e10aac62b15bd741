package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// EnvChromium names the Chromium binary of the browser test
// (scripts/e2e.sh installs Debian's chromium and sets it).
const EnvChromium = "SESSCTL_E2E_CHROMIUM"

// chromium finds the browser: $SESSCTL_E2E_CHROMIUM, else chromium on
// PATH. With SESSCTL_E2E=1 a missing browser fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(EnvChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("e2e: no Chromium: set %s (scripts/e2e.sh installs Debian's chromium)", EnvChromium)
	return ""
}

// headless runs Chromium headless on url with extra flags (--dump-dom,
// --screenshot=…) and returns stdout. The flags keep it off the network:
// this machine's network is closed, and a page that is self-contained
// needs none.
func headless(t *testing.T, bin, url string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1000,1400"}, extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, clip(stderr.String()))
	}
	return stdout.Bytes()
}

// The HTML transcript of a session the real client wrote is loaded by a
// real headless browser (issue 14: "Check it in a real headless browser").
// The session holds a prompt that tries to break out of the page (a
// script that would retitle it, an image and a stylesheet on the test's
// own server), a thinking block, a tool result long enough to fold, and
// sessctl's compaction summary. The browser must render every part as
// text, run nothing, and fetch nothing but the page itself.
func TestExportHTMLInBrowser(t *testing.T) {
	h := NewHarness(t)
	bin := chromium(t)

	var mu sync.Mutex
	var fetched []string
	page := filepath.Join(t.TempDir(), "transcript.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched = append(fetched, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/transcript.html" {
			http.ServeFile(w, r, page)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()

	long := filepath.Join(h.Project, "long.txt")
	var body strings.Builder
	for i := 1; i <= 40; i++ {
		body.WriteString("row " + strings.Repeat("x", i%7) + "\n")
	}
	if err := os.WriteFile(long, []byte(body.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	hostile := `THINK READ:` + long + ` </pre><script>document.title="PWNED"</script>` +
		`<img src="` + srv.URL + `/leak.png"><link rel=stylesheet href="` + srv.URL + `/leak.css"> end`
	r := h.ClaudePrompt(hostile)
	path := h.ClaudeSessionFile(r.SessionID)
	h.ClaudeResume(r.SessionID, "NOTOOL second turn "+padding)
	h.ClaudeResume(r.SessionID, "NOTOOL third turn")
	compactFile(t, path, session.Claude, 1, 0)

	// --all: the turns the compaction summarised are shown too, marked
	h.Sessctl("export", "--format", "html", "--thinking", "--all", "-o", page, path)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte("<script")) || bytes.Contains(html, []byte(srv.URL+`/leak.png"`)) {
		t.Fatalf("the HTML carries the prompt's markup raw")
	}

	dom := string(headless(t, bin, srv.URL+"/transcript.html", "--dump-dom"))
	if !strings.Contains(dom, "</html>") {
		t.Fatalf("chromium dumped no page:\n%s", clip(dom))
	}
	title := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(dom)
	if title == nil || title[1] == "PWNED" {
		t.Errorf("the page's title is %q: the prompt's script ran or the title is missing", title)
	}
	if n := strings.Count(dom, "<script"); n != 0 {
		t.Errorf("the rendered page holds %d script elements", n)
	}
	if strings.Contains(dom, "<img") || strings.Contains(dom, "<link rel=\"stylesheet\"") {
		t.Error("the prompt's image or stylesheet became an element")
	}
	for _, want := range []string{
		// the prompt, as text
		`&lt;script&gt;document.title="PWNED"&lt;/script&gt;`,
		`&lt;img src="` + srv.URL + `/leak.png"&gt;`,
		// the parts of a transcript
		"<h2>Turn 0</h2>", "Tool call: Read [compacted]", "Tool result: Read [compacted]", "Compaction summary", "Thinking",
		"I should list the files first", // the fake model's thinking text
		"more lines</summary>",          // the long result is folded
		"NOTOOL third turn",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}

	// a screenshot: the page renders (kept with SESSCTL_E2E_KEEP, to look at)
	shot := filepath.Join(t.TempDir(), "transcript.png")
	if keep := os.Getenv(EnvKeep); keep != "" {
		shot = filepath.Join(h.Root, "transcript.png")
	}
	headless(t, bin, srv.URL+"/transcript.html", "--screenshot="+shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("chromium's screenshot is missing or blank: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range fetched {
		// the page itself, and the icon a browser asks for on its own
		if p != "/transcript.html" && p != "/favicon.ico" {
			t.Errorf("the browser fetched %s: the page is not self-contained", p)
		}
	}
	if len(fetched) == 0 {
		t.Error("the browser fetched nothing: the page was not loaded from the test server")
	}
}
