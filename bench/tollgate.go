package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"tollgate/relay/relaytest"
)

// rootPassword is the root password the benchmark gives each fresh Tollgate.
const rootPassword = "Bench-root-Passw0rd!"

// Benchmark model names: a fast one, and one whose streams carry 20 chunks 5 ms apart.
const (
	modelFast   = "bench-model"
	modelPaced  = "bench-stream"
	convSuffix  = "-conv" // a target and model name suffix: served by an anthropic channel (translated)
	pacedChunks = 20
	pacedDelay  = 5 * time.Millisecond
)

// buildTollgate compiles the gateway from the repository root into dir as `make build` and the Dockerfile do:
// static (CGO_ENABLED=0) and -trimpath. A cgo build would link libc dynamically, a binary nobody ships, whose
// loader, libc pages and cgo start-up add 4–5 MB to the idle RSS measured here.
func buildTollgate(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "tollgate")
	if err := runCmd(ctx, repo, []string{"CGO_ENABLED=0"}, "go", "build", "-trimpath", "-o", bin, "."); err != nil {
		return "", fmt.Errorf("build tollgate: %w", err)
	}
	return bin, nil
}

// shapeEnv is the environment of one deployment shape.
type shapeEnv struct {
	name string
	env  []string
}

// startTollgate starts bin on a free port with the shape's environment and waits for /healthz.
func startTollgate(ctx context.Context, bin, dir string, sh shapeEnv) (*Proc, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	secret := make([]byte, 24)
	_, _ = rand.Read(secret)
	env := append([]string{
		"PORT=" + itoa(port), "SECRET_KEY=" + hex.EncodeToString(secret), "ROOT_PASSWORD=" + rootPassword,
		"LOG_LEVEL=warn", "GIN_MODE=release",
	}, sh.env...)
	p, err := startProc("tollgate-"+sh.name, bin, nil, env, dir)
	if err != nil {
		return nil, "", err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := p.waitHTTP(ctx, base+"/healthz", 60*time.Second); err != nil {
		p.Stop()
		return nil, "", err
	}
	return p, base, nil
}

// apiClient calls Tollgate's console API.
type apiClient struct {
	base string
	jwt  string
	c    *http.Client
}

func (a *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.jwt != "" {
		req.Header.Set("Authorization", "Bearer "+a.jwt)
	}
	resp, err := a.c.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode %q: %w", method, path, data, err)
		}
	}
	return nil
}

// setupTollgate creates the bench channel, prices, balance and an sk- key through the API (docs/API.md) and
// returns the key once a relayed call succeeds.
// strategy, when set, becomes every model's routing strategy (PUT /api/admin/routing/models/*/*); channels > 1
// adds copies of the bench channel, so each routing decision ranks that many candidates; limited makes the key
// one with its own quota (remain_quota), leased on the Redis shape together with the balance.
func setupTollgate(ctx context.Context, base string, up *relaytest.Upstream, strategy string, channels int, limited bool) (string, *apiClient, error) {
	a := &apiClient{base: base, c: &http.Client{Timeout: 10 * time.Second}}
	var login struct {
		Token string `json:"token"`
		User  struct {
			ID int64 `json:"id"`
		} `json:"user"`
	}
	if err := a.call(ctx, http.MethodPost, "/api/auth/login", map[string]string{"username": "root", "password": rootPassword}, &login); err != nil {
		return "", nil, err
	}
	if login.Token == "" {
		return "", nil, fmt.Errorf("login: no token in answer")
	}
	a.jwt = login.Token
	var ch struct {
		ID int64 `json:"id"`
	}
	channel := map[string]any{
		"type": "openai", "name": "bench", "base_url": up.URL, "keys": []string{"bench-upstream-key"},
		"models": []string{modelFast, modelPaced, modelBurst}, "groups": []string{"default"}, "priority": 0, "weight": 1,
	}
	if err := a.call(ctx, http.MethodPost, "/api/admin/channels", channel, &ch); err != nil {
		return "", nil, err
	}
	for i := 2; i <= channels; i++ {
		channel["name"] = fmt.Sprintf("bench-%d", i)
		if err := a.call(ctx, http.MethodPost, "/api/admin/channels", channel, nil); err != nil {
			return "", nil, err
		}
	}
	if strategy != "" {
		if err := a.call(ctx, http.MethodPut, "/api/admin/routing/models/*/*", map[string]any{"strategy": strategy}, nil); err != nil {
			return "", nil, fmt.Errorf("routing strategy %s: %w", strategy, err)
		}
	}
	// The same models under convSuffix live on an anthropic channel only: OpenAI chat calls to them are
	// translated to Messages and back.
	conv := map[string]any{
		"type": "anthropic", "name": "bench-conv", "base_url": up.URL, "keys": []string{"bench-upstream-key"},
		"models": []string{modelFast + convSuffix, modelPaced + convSuffix}, "groups": []string{"default"},
	}
	if err := a.call(ctx, http.MethodPost, "/api/admin/channels", conv, nil); err != nil {
		return "", nil, err
	}
	prices := []map[string]string{
		{"model": modelFast, "input": "1", "output": "2"},
		{"model": modelPaced, "input": "1", "output": "2"},
		{"model": modelBurst, "input": "1", "output": "2"},
		{"model": modelFast + convSuffix, "input": "1", "output": "2"},
		{"model": modelPaced + convSuffix, "input": "1", "output": "2"},
	}
	if err := a.call(ctx, http.MethodPut, "/api/admin/pricing", prices, nil); err != nil {
		return "", nil, err
	}
	uid := login.User.ID
	if uid == 0 {
		uid = 1
	}
	quota := map[string]any{"delta": int64(1e15) /* a billion USD */, "reason": "bench"}
	if err := a.call(ctx, http.MethodPost, fmt.Sprintf("/api/admin/users/%d/quota", uid), quota, nil); err != nil {
		return "", nil, err
	}
	var tok struct {
		Key string `json:"key"`
	}
	key := map[string]any{"name": "bench", "unlimited": true}
	if limited {
		key = map[string]any{"name": "bench", "unlimited": false, "remain_quota": int64(1e15)}
	}
	if err := a.call(ctx, http.MethodPost, "/api/tokens", key, &tok); err != nil {
		return "", nil, err
	}
	if !strings.HasPrefix(tok.Key, "sk-") {
		return "", nil, fmt.Errorf("POST /api/tokens: no sk- key in answer")
	}
	err := probe(ctx, base, tok.Key, "")
	if err != nil && sawPathWithoutV1(up) {
		// The channel wants the base URL with /v1; try that before giving up.
		patch := map[string]any{"base_url": up.URL + "/v1"}
		if perr := a.call(ctx, http.MethodPatch, fmt.Sprintf("/api/admin/channels/%d", ch.ID), patch, nil); perr == nil {
			err = probe(ctx, base, tok.Key, "")
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("relayed call through the new channel failed: %w", err)
	}
	if err := probe(ctx, base, tok.Key, convSuffix); err != nil {
		return "", nil, fmt.Errorf("translated call through the anthropic channel failed: %w", err)
	}
	return tok.Key, a, nil
}

// sawPathWithoutV1 reports whether the gateway called the fake on a path lacking the /v1 prefix.
func sawPathWithoutV1(up *relaytest.Upstream) bool {
	for _, r := range up.Requests() {
		if !strings.HasPrefix(r.Path, "/v1/") {
			return true
		}
	}
	return false
}

// probe retries one non-stream and one stream call for a few seconds (config reaches the router
// asynchronously).
func probe(ctx context.Context, base, key, suffix string) error {
	g := NewGen(10 * time.Second)
	defer g.Close()
	t := Target{Name: "probe", URL: base, Key: key, ModelSuffix: suffix}
	var last error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		s := g.Do(ctx, t, shotPlain())
		if s.Err == nil {
			s = g.Do(ctx, t, shotStream(modelFast))
		}
		if last = s.Err; last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return last
}

func shotPlain() Shot {
	return Shot{Path: "/v1/chat/completions", Body: []byte(`{"model":"` + modelFast +
		`","messages":[{"role":"user","content":"Say hello."}],"max_tokens":32}`)}
}

func shotStream(model string) Shot {
	return Shot{Path: "/v1/chat/completions", Stream: true, Body: []byte(`{"model":"` + model +
		`","messages":[{"role":"user","content":"Say hello."}],"max_tokens":32,"stream":true,` +
		`"stream_options":{"include_usage":true}}`)}
}
