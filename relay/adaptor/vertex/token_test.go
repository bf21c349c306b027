package vertex

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/relaytest"
)

// clock is a test clock moved by hand.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock    { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func tokensFor(c *clock) *Tokens     { return NewTokens(http.DefaultClient, c.now) }
func mustToken(t *testing.T, ts *Tokens, key string) string {
	t.Helper()
	tok, err := ts.Token(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokens_CachedUntilFiveMinutesBeforeExpiry(t *testing.T) {
	vx := relaytest.NewVertex()
	defer vx.Close()
	c := newClock(time.Now())
	ts := tokensFor(c)
	first := mustToken(t, ts, vx.Key)
	c.add(3599*time.Second - refreshBefore - time.Second) // the fake's tokens live 3599 s
	if mustToken(t, ts, vx.Key) != first || vx.Exchanges() != 1 {
		t.Fatalf("a token more than 5 min from expiry is reused (exchanges %d)", vx.Exchanges())
	}
	c.add(2 * time.Second)
	if second := mustToken(t, ts, vx.Key); second == first || vx.Exchanges() != 2 {
		t.Fatalf("a token within 5 min of expiry is refreshed (exchanges %d)", vx.Exchanges())
	}
}

func TestTokens_OneExchangeInFlightForConcurrentCallers(t *testing.T) {
	vx := relaytest.NewVertex()
	defer vx.Close()
	ts := tokensFor(newClock(time.Now()))
	var wg sync.WaitGroup
	got := make(chan string, 200)
	for range 200 {
		wg.Go(func() { got <- mustToken(t, ts, vx.Key) })
	}
	wg.Wait()
	close(got)
	for tok := range got {
		if tok != "ya29.fake-1" {
			t.Fatalf("token %q", tok)
		}
	}
	if vx.Exchanges() != 1 {
		t.Fatalf("200 concurrent callers made %d exchanges", vx.Exchanges())
	}
}

func TestTokens_ARefusedGrantIsACredentialError(t *testing.T) {
	vx := relaytest.NewVertex()
	defer vx.Close()
	other := relaytest.NewVertex() // a key the first fake does not trust, pointed at its token endpoint
	defer other.Close()
	key := strings.Replace(other.Key, other.TokenURI, vx.TokenURI, 1)
	key = strings.Replace(key, other.ClientEmail, vx.ClientEmail, 1)
	_, err := tokensFor(newClock(time.Now())).Token(context.Background(), key)
	var ce *adaptor.CredentialError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("err = %v, want a CredentialError naming invalid_grant", err)
	}
	_, err = tokensFor(newClock(time.Now())).Token(context.Background(), `{"type":"service_account"}`)
	if !errors.As(err, &ce) {
		t.Fatalf("a key file without a key: %v", err)
	}
}

func TestConfigure_PublisherByConfigOrName(t *testing.T) {
	a := New(nil)
	cfg := model.ChannelConfig{Vertex: &model.VertexConfig{Project: "p", Region: "global", Publishers: map[string]string{"my-claude": "anthropic"}}}
	for m, want := range map[string]adaptor.Protocol{"gemini-2.5-pro": adaptor.Gemini, "claude-opus-4-1": adaptor.Anthropic, "my-claude": adaptor.Anthropic} {
		if got := a.Configure(cfg, m).Protocol(); got != want {
			t.Errorf("%s: %v, want %v", m, got, want)
		}
	}
	if u := (where{project: "p", region: "global"}).url("", Google, "gemini-2.5-pro", "generateContent"); u !=
		"https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:generateContent" {
		t.Errorf("global url %s", u)
	}
	if u := (where{project: "p", region: "europe-west4"}).url("", Anthropic, "claude-x", "rawPredict"); !strings.HasPrefix(u, "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/") {
		t.Errorf("regional url %s", u)
	}
}
