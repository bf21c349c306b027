package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"tollgate/app/apptest"
)

// fakeSiteverify is a local stand-in for Turnstile's and hCaptcha's siteverify endpoints: a form POST of
// secret, response and remoteip, answered with {"success": bool}. It accepts the token "human" with the right
// secret and records what it was sent.
type fakeSiteverify struct {
	*httptest.Server
	mu   sync.Mutex
	seen []map[string]string
}

func newFakeSiteverify(t *testing.T, secret string) *fakeSiteverify {
	f := &fakeSiteverify{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got := map[string]string{"secret": r.PostForm.Get("secret"), "response": r.PostForm.Get("response"), "remoteip": r.PostForm.Get("remoteip")}
		f.mu.Lock()
		f.seen = append(f.seen, got)
		f.mu.Unlock()
		ok := got["secret"] == secret && got["response"] == "human"
		out := map[string]any{"success": ok}
		if !ok {
			out["error-codes"] = []string{"invalid-input-response"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSiteverify) calls() []map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]string(nil), f.seen...)
}

func TestCaptcha_SignUpLoginAndResetNeedAPassingToken(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"turnstile", "hcaptcha"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			fake := newFakeSiteverify(t, "captcha-secret-1")
			n, _, _, _ := mailNode(t, map[string]any{"password_reset": true, "captcha": map[string]any{"provider": provider,
				"site_key": "site-key-1", "secret": "captcha-secret-1", "verify_url": fake.URL, "login_after_failures": 2}})
			anon := n.Anon(t)

			// The console learns which widget to show.
			var st struct {
				Captcha *struct {
					Provider           string `json:"provider"`
					SiteKey            string `json:"site_key"`
					LoginAfterFailures int    `json:"login_after_failures"`
				} `json:"captcha"`
				PasswordReset bool `json:"password_reset"`
			}
			anon.Do("GET", "/api/status", nil).JSON(t, &st)
			if st.Captcha == nil || st.Captcha.Provider != provider || st.Captcha.SiteKey != "site-key-1" || st.Captcha.LoginAfterFailures != 2 || !st.PasswordReset {
				t.Fatalf("status: %+v", st)
			}
			// The secret is shown masked to the admin.
			var got struct {
				Captcha struct {
					Secret string `json:"secret"`
				} `json:"captcha"`
			}
			n.Root(t).Do("GET", "/api/admin/settings", nil).JSON(t, &got)
			if got.Captcha.Secret == "captcha-secret-1" || got.Captcha.Secret == "" {
				t.Fatalf("captcha secret shown as %q", got.Captcha.Secret)
			}

			reg := func(token string) *apptest.Resp {
				return anon.Do("POST", "/api/auth/register", map[string]string{"username": "hugo", "password": "tram-lines-42",
					"email": "hugo@example.com", "captcha": token})
			}
			e := wantError(t, zh(anon).Do("POST", "/api/auth/register", map[string]string{"username": "hugo", "password": "tram-lines-42"}),
				http.StatusBadRequest, "captcha_failed")
			wantChinese(t, e)
			before := len(fake.calls())
			wantError(t, reg("robot"), http.StatusBadRequest, "captcha_failed")
			wantStatus(t, reg("human"), http.StatusCreated)
			calls := fake.calls()
			if len(calls) != before+2 || calls[len(calls)-1]["secret"] != "captcha-secret-1" || calls[len(calls)-1]["remoteip"] == "" {
				t.Fatalf("siteverify calls: %+v", calls)
			}

			// Sign-in: free until the username has two failures, then the captcha is asked for.
			login := func(pw, token string) *apptest.Resp {
				return anon.Do("POST", "/api/auth/login", map[string]string{"username": "hugo", "password": pw, "captcha": token})
			}
			wantStatus(t, login("tram-lines-42", ""), http.StatusOK)
			wantError(t, login("wrong-one-1", ""), http.StatusUnauthorized, "invalid_credentials")
			wantError(t, login("wrong-one-2", ""), http.StatusUnauthorized, "invalid_credentials")
			wantError(t, login("tram-lines-42", ""), http.StatusBadRequest, "captcha_failed")
			wantError(t, login("tram-lines-42", "robot"), http.StatusBadRequest, "captcha_failed")
			wantStatus(t, login("tram-lines-42", "human"), http.StatusOK)
			// A success forgets the failures.
			wantStatus(t, login("tram-lines-42", ""), http.StatusOK)

			// Password reset request.
			ask := func(token string) *apptest.Resp {
				return anon.Do("POST", "/api/auth/email/send", map[string]string{"email": "hugo@example.com", "purpose": "reset", "captcha": token})
			}
			wantError(t, ask(""), http.StatusBadRequest, "captcha_failed")
			wantError(t, ask("robot"), http.StatusBadRequest, "captcha_failed")
			wantStatus(t, ask("human"), http.StatusAccepted)

			// A provider that cannot be reached does not let anyone through.
			fake.Close()
			wantError(t, reg("human"), http.StatusServiceUnavailable, "captcha_unavailable")
		})
	}
}

func TestCaptcha_SettingsAreValidated(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"captcha": map[string]any{"provider": "recaptcha", "site_key": "k", "secret": "s"}}), "captcha.provider")
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"captcha": map[string]any{"provider": "turnstile", "site_key": "k"}}), "captcha.secret")
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"captcha": map[string]any{"provider": "turnstile", "site_key": "k", "secret": "s", "verify_url": "ftp://x"}}), "captcha.verify_url")
	// Verification and reset need a mail server.
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"email_verification": true}), "email_verification")
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"password_reset": true}), "password_reset")
	// Captcha off: nothing asked for.
	var st map[string]any
	n.Anon(t).Do("GET", "/api/status", nil).JSON(t, &st)
	if st["captcha"] != nil || st["email_verification"] != false {
		t.Fatalf("status: %v", st)
	}
}
