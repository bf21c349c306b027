// Package stripetest is a fake Stripe API for tests (POST /v1/checkout/sessions answers like Stripe) and
// builds webhook events signed the way Stripe signs them (the library's GenerateTestSignedPayload).
package stripetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"
)

// API is a running fake of the Stripe API.
type API struct {
	Server *httptest.Server
	URL    string // the STRIPE_API_BASE to configure
	Key    string // the secret key it accepts

	mu       sync.Mutex
	sessions map[string]Session // by id
	byIdem   map[string]string  // idempotency key → session id
	seq      int
}

// Session is what the fake remembers of a Checkout Session it created.
type Session struct {
	ID, URL, ClientReferenceID, OrderNo, Currency, SuccessURL, CancelURL string
	AmountTotal                                                          int64
	ExpiresAt                                                            int64
}

// New starts a fake that accepts secret key key; it stops when the test ends.
func New(t testing.TB, key string) *API {
	a := &API{Key: key, sessions: map[string]Session{}, byIdem: map[string]string{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.Server.URL
	t.Cleanup(a.Server.Close)
	return a
}

func stripeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": typ, "message": msg}})
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/checkout/sessions" {
		stripeError(w, 404, "invalid_request_error", "Unrecognized request URL")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+a.Key {
		stripeError(w, 401, "invalid_request_error", "Invalid API Key provided")
		return
	}
	_ = r.ParseForm()
	f := r.PostForm
	unit, err := strconv.ParseInt(f.Get("line_items[0][price_data][unit_amount]"), 10, 64)
	if err != nil || f.Get("mode") != "payment" || f.Get("success_url") == "" || f.Get("line_items[0][quantity]") != "1" {
		stripeError(w, 400, "invalid_request_error", "bad checkout session parameters: "+f.Encode())
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	idem := r.Header.Get("Idempotency-Key")
	s, seen := a.sessions[a.byIdem[idem]]
	if !seen || idem == "" {
		a.seq++
		id := fmt.Sprintf("cs_test_%06d", a.seq)
		exp, _ := strconv.ParseInt(f.Get("expires_at"), 10, 64)
		s = Session{ID: id, URL: a.URL + "/c/pay/" + id, ClientReferenceID: f.Get("client_reference_id"),
			OrderNo: f.Get("metadata[order_no]"), Currency: f.Get("line_items[0][price_data][currency]"),
			SuccessURL: f.Get("success_url"), CancelURL: f.Get("cancel_url"), AmountTotal: unit, ExpiresAt: exp}
		a.sessions[id] = s
		a.byIdem[idem] = id
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a.object(s, "open", "unpaid"))
}

// object renders s as Stripe's checkout.session object.
func (a *API) object(s Session, status, paymentStatus string) map[string]any {
	return map[string]any{"id": s.ID, "object": "checkout.session", "url": s.URL, "status": status,
		"payment_status": paymentStatus, "mode": "payment", "amount_total": s.AmountTotal, "currency": s.Currency,
		"client_reference_id": s.ClientReferenceID, "metadata": map[string]string{"order_no": s.OrderNo},
		"payment_intent": "pi_" + s.ID[len("cs_"):], "success_url": s.SuccessURL, "cancel_url": s.CancelURL}
}

// Sessions returns the sessions created so far.
func (a *API) Sessions() []Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		out = append(out, s)
	}
	return out
}

// SessionFor returns the session created for an order.
func (a *API) SessionFor(orderNo string) (Session, bool) {
	for _, s := range a.Sessions() {
		if s.OrderNo == orderNo {
			return s, true
		}
	}
	return Session{}, false
}

// Object is the checkout.session object of s as an event carries it, with change applied (to forge fields).
func (a *API) Object(s Session, status, paymentStatus string, change func(m map[string]any)) map[string]any {
	m := a.object(s, status, paymentStatus)
	if change != nil {
		change(m)
	}
	return m
}

// Event is a webhook delivery: the body and its Stripe-Signature header.
type Event struct {
	Body      []byte
	Signature string
}

// NewEvent builds an event of type typ about obj, signed with secret at ts (zero: now), as Stripe does.
func NewEvent(id, typ, apiVersion string, obj map[string]any, secret string, ts time.Time) Event {
	body, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": apiVersion,
		"created": time.Now().Unix(), "livemode": false, "pending_webhooks": 1, "data": map[string]any{"object": obj}})
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: ts})
	return Event{Body: body, Signature: sp.Header}
}

// Deliver posts e to a webhook URL and returns the status and body.
func (e Event) Deliver(webhookURL string) (int, string, error) {
	req, _ := http.NewRequest(http.MethodPost, webhookURL, bytes.NewReader(e.Body))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", e.Signature)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}
