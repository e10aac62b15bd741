// Package fakemodel is a deterministic fake model server for end-to-end tests
// of the real Claude Code and Codex CLI binaries.
//
// It listens on 127.0.0.1 only and speaks just enough of three APIs:
//
//   - the Anthropic Messages API (POST /v1/messages, Claude Code adds
//     ?beta=true), streamed as message_start … message_stop SSE events;
//   - the OpenAI Responses API (POST /v1/responses), streamed as
//     response.created … response.completed SSE events;
//   - the OpenAI Chat Completions API (POST /v1/chat/completions, as Kimi
//     Code sends it), streamed as chat.completion.chunk data events ending
//     in a usage chunk (with stream_options.include_usage) and [DONE].
//
// Every request is logged as one JSON line (headers without credentials, the
// full JSON body, and a summary of the reply) before it is answered, both in
// memory (Server.Requests) and, optionally, in a log file. Replies are scripted
// from the last user message; see Plan for the keywords.
package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// maxBody bounds the size of a request body the server reads.
const maxBody = 64 << 20

// Options configure a Server. The zero value is usable.
type Options struct {
	// Addr is the listen address. It must be a loopback address; the
	// default "127.0.0.1:0" picks a free port.
	Addr string
	// LogPath, if set, receives one JSON line per request (appended).
	LogPath string
	// Log, if set, also receives one JSON line per request.
	Log io.Writer
}

// Server is a running fake model server.
type Server struct {
	url  string
	srv  *http.Server
	done chan struct{}

	mu       sync.Mutex
	reqs     []Request
	logFile  *os.File
	log      io.Writer
	serveErr error
}

// Start starts a server listening on opts.Addr (default 127.0.0.1:0).
func Start(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("fakemodel: listen address %q is not a loopback IP address", addr)
	}
	s := &Server{done: make(chan struct{}), log: opts.Log}
	if opts.LogPath != "" {
		f, err := os.OpenFile(opts.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("fakemodel: open request log: %w", err)
		}
		s.logFile = f
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if s.logFile != nil {
			s.logFile.Close()
		}
		return nil, fmt.Errorf("fakemodel: %w", err)
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(s.done)
		err := s.srv.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.serveErr = err
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// URL is the base URL, "http://127.0.0.1:<port>", without a trailing slash
// and without /v1.
func (s *Server) URL() string { return s.url }

// Close stops the server, lets requests in progress finish (for up to 2 s;
// after that connections are cut, which is not an error) and closes the log
// file.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var err error
	if s.srv.Shutdown(ctx) != nil {
		// Connections a client dialled but never used count as active
		// for 5 s; do not wait for them.
		err = s.srv.Close()
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serveErr != nil {
		err = errors.Join(err, s.serveErr)
	}
	if s.logFile != nil {
		err = errors.Join(err, s.logFile.Close())
		s.logFile = nil
	}
	return err
}

// Requests returns a copy of every request logged so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is the number of requests logged so far. Requests()[Count():] taken
// later are the requests that arrived in between.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// record numbers r, lets prepare fill in what depends on the number (reply
// ids), then logs r. Errors writing the log file are ignored: the in-memory
// log is authoritative.
func (s *Server) record(r *Request, prepare func(n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.N = len(s.reqs) + 1
	if prepare != nil {
		prepare(r.N)
	}
	s.reqs = append(s.reqs, *r)
	line, err := json.Marshal(r)
	if err != nil {
		// Cannot happen: bodies are compacted valid JSON or strings.
		line = []byte(fmt.Sprintf(`{"n":%d,"error":%q}`, r.N, err.Error()))
	}
	line = append(line, '\n')
	if s.logFile != nil {
		s.logFile.Write(line)
	}
	if s.log != nil {
		s.log.Write(line)
	}
}

// hiddenHeaders are never logged.
var hiddenHeaders = map[string]bool{
	"authorization":       true,
	"x-api-key":           true,
	"proxy-authorization": true,
	"cookie":              true,
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err == nil && len(body) > maxBody {
		err = fmt.Errorf("request body larger than %d bytes", maxBody)
	}
	req := Request{
		Time:    time.Now().UTC().Format(time.RFC3339Nano),
		Kind:    routeKind(r.Method, r.URL.Path),
		Method:  r.Method,
		Path:    r.URL.Path,
		Query:   r.URL.RawQuery,
		Headers: map[string]string{},
	}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if hiddenHeaders[lk] {
			continue
		}
		req.Headers[lk] = strings.Join(vs, ", ")
	}
	if len(body) > 0 {
		var buf bytes.Buffer
		if json.Valid(body) && json.Compact(&buf, body) == nil {
			req.Body = buf.Bytes()
		} else {
			req.BodyText = string(body)
		}
	}
	if err != nil {
		req.Error = err.Error()
		s.record(&req, nil)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	// the three model APIs: plan the reply, record it, stream it
	var plan func([]byte) (Plan, error)
	var fail func(http.ResponseWriter, int, string)
	var serve func(http.ResponseWriter, Plan)
	switch req.Kind {
	case KindMessages:
		plan, fail, serve = PlanAnthropic, writeAnthropicError, serveAnthropic
	case KindResponses:
		plan, fail, serve = PlanResponses, writeOpenAIError, serveResponses
	case KindChat:
		plan, fail = PlanChat, writeOpenAIError
		serve = func(w http.ResponseWriter, p Plan) { serveChat(w, p, chatIncludeUsage(body)) }
	}
	if plan != nil {
		p, err := plan(body)
		if err != nil {
			req.Error = err.Error()
			s.record(&req, nil)
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		s.record(&req, func(n int) {
			p.assignIDs(body, n)
			req.Reply = &p
		})
		serve(w, p)
		return
	}
	switch req.Kind {
	case KindCountTokens:
		s.record(&req, nil)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": estimateTokens(body)})
	case KindModels:
		s.record(&req, nil)
		writeJSON(w, http.StatusOK, map[string]any{
			"object": "list",
			"data": []map[string]any{
				{"id": "claude-opus-4-8", "type": "model", "object": "model", "display_name": "Fake Claude"},
				{"id": "gpt-5", "type": "model", "object": "model", "owned_by": "fakemodel"},
			},
		})
	default:
		s.record(&req, nil)
		http.NotFound(w, r)
	}
}

// Request kinds, by route.
const (
	KindMessages    = "messages"     // POST /v1/messages (Anthropic)
	KindResponses   = "responses"    // POST /v1/responses (OpenAI)
	KindChat        = "chat"         // POST /v1/chat/completions (OpenAI Chat Completions: Kimi Code)
	KindCountTokens = "count_tokens" // POST /v1/messages/count_tokens
	KindModels      = "models"       // GET /v1/models
	KindOther       = "other"        // anything else: answered 404
)

func routeKind(method, path string) string {
	path = strings.TrimSuffix(path, "/")
	switch {
	case method == http.MethodPost && path == "/v1/messages":
		return KindMessages
	case method == http.MethodPost && path == "/v1/responses":
		return KindResponses
	case method == http.MethodPost && path == "/v1/chat/completions":
		return KindChat
	case method == http.MethodPost && path == "/v1/messages/count_tokens":
		return KindCountTokens
	case method == http.MethodGet && path == "/v1/models":
		return KindModels
	}
	return KindOther
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeAnthropicError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": "invalid_request_error", "message": "fakemodel: " + msg},
	})
}

func writeOpenAIError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{
		"error": map[string]any{"type": "invalid_request_error", "message": "fakemodel: " + msg},
	})
}
