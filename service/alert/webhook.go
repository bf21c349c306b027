package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tollgate/service/setting"
)

// Webhook headers. The signature covers the timestamp and the body ("<timestamp>.<body>"), so a receiver that
// refuses timestamps older than a few minutes also refuses replays.
const (
	HeaderSignature = "X-Tollgate-Signature"
	HeaderTimestamp = "X-Tollgate-Timestamp"
	HeaderEvent     = "X-Tollgate-Event"
	HeaderDelivery  = "X-Tollgate-Delivery"
)

// Sign is the X-Tollgate-Signature value for body sent at timestamp (Unix seconds).
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a received webhook: the signature over timestamp and body, and a timestamp within tolerance
// of now. Receivers written in Go can call it as is.
func Verify(secret, signature, timestamp string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("bad timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("timestamp outside tolerance (replay?)")
	}
	if !hmac.Equal([]byte(signature), []byte(Sign(secret, ts, body))) {
		return errors.New("signature mismatch")
	}
	return nil
}

// Payload is the JSON body of every webhook.
type Payload struct {
	ID        string         `json:"id"` // the delivery id, the same on every retry
	Event     string         `json:"event"`
	Key       string         `json:"key"`
	CreatedAt time.Time      `json:"created_at"`
	Text      string         `json:"text"` // the English one-line message
	Data      map[string]any `json:"data"`
}

// retryable: network errors, 5xx and 429 are tried again; any other answer is final.
func retryable(status int) bool { return status >= 500 || status == http.StatusTooManyRequests }

// sendWebhook POSTs the event, signed afresh per attempt, retrying with backoff on retryable failures.
func (s *Service) sendWebhook(ctx context.Context, w setting.Webhook, ev Event) result {
	subject, text, _ := render(ev, "en")
	body, err := json.Marshal(Payload{ID: newID(), Event: ev.Name, Key: ev.Key, CreatedAt: ev.At, Text: text, Data: ev.Data})
	if err != nil {
		return result{err: err, subject: subject}
	}
	res := result{subject: subject}
	delay := s.opt.Backoff
	for attempt := 0; attempt <= s.opt.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				res.err = fmt.Errorf("%w (stopped before retry)", res.err)
				return res
			case <-time.After(delay):
			}
			delay *= 2
		}
		res.attempts++
		status, err := s.postOnce(ctx, w, ev.Name, body)
		if err == nil && status >= 200 && status < 300 {
			res.err = nil
			return res
		}
		if err != nil {
			res.err = err
		} else {
			res.err = fmt.Errorf("receiver answered %d", status)
		}
		if err == nil && !retryable(status) {
			return res
		}
	}
	res.err = fmt.Errorf("gave up after %d attempts: %w", res.attempts, res.err)
	return res
}

func (s *Service) postOnce(ctx context.Context, w setting.Webhook, event string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opt.HookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	ts := s.d.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Tollgate-Alerts/1")
	req.Header.Set(HeaderEvent, event)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(w.Secret, ts, body))
	resp, err := s.d.Client.Do(req)
	if err != nil {
		return 0, scrubURL(err, w.URL)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// scrubURL keeps a query string (which may carry a token) out of the logged error.
func scrubURL(err error, raw string) error {
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		return errors.New(strings.ReplaceAll(err.Error(), raw, raw[:i]+"?…"))
	}
	return err
}
