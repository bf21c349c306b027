package relay

import (
	"bytes"
	"strings"

	"tollgate/service/channel"
	"tollgate/service/secret"
)

// minSecret is the shortest credential scrubbed: shorter header values ("1", "beta") are no secret and
// replacing them would garble the body.
const minSecret = 8

// scrubSecrets replaces the channel's credentials (its keys and header_override values, and the token of a
// "Bearer …" value) in an upstream error body with their masks. Some upstreams (proxies, self-hosted
// OpenAI-compatible servers) echo the request's headers in their errors, and a client error is passed to the
// caller as the upstream wrote it and kept in the logs. Only error bodies and in-stream error events pass here,
// so the cost is off the hot path.
func scrubSecrets(ch *channel.Channel, body []byte) []byte {
	if ch == nil || len(body) == 0 {
		return body
	}
	scrub := func(s string) {
		if len(s) >= minSecret && bytes.Contains(body, []byte(s)) {
			body = bytes.ReplaceAll(body, []byte(s), []byte(secret.Mask(s)))
		}
	}
	for _, k := range ch.Keys {
		scrub(k)
	}
	for _, v := range ch.HeaderOverride {
		scrub(v)
		if tok, ok := strings.CutPrefix(v, "Bearer "); ok {
			scrub(tok)
		}
	}
	return body
}
