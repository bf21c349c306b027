package relay

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
	"tollgate/service/pricing"
)

// MaxImages bounds n on the image endpoints (OpenAI allows 1 … 10).
const MaxImages = 10

// rerankDocsPerSearch is how many documents one search unit covers (Cohere's rule).
const rerankDocsPerSearch = 100

// unknownAudioBytesPerSecond sizes the hold of an audio upload whose duration its headers do not give:
// 2,000 bytes a second is 16 kbit/s, below what speech codecs use, so the hold covers the real length.
const unknownAudioBytesPerSecond = 2000

// maxHeldAudio caps that estimate (the upstream's reported duration settles the real cost).
const maxHeldAudio = 3 * time.Hour

// media is what a media request bills beyond tokens, read from the request before the call.
type media struct {
	images        int64 // images asked for (n)
	size, quality string
	chars         int64 // characters of speech input
	searches      int64 // rerank search units
	upload        *upload
}

// readMediaFields reads a JSON media body's fields: model, and what sizes the hold (n, size and quality of
// images, the speech input's characters, the rerank documents). A wrong type or range is a 400 naming the field.
func readMediaFields(rq *request) (fields, *relayError) {
	f := fields{choices: 1}
	r := gjson.GetManyBytes(rq.body, "model", "n", "size", "quality", "input", "documents")
	if r[0].Exists() && r[0].Type != gjson.String {
		return f, newErr(http.StatusBadRequest, "validation_failed", "model", "must be a string")
	}
	if f.model = r[0].String(); f.model == "" {
		return f, newErr(http.StatusBadRequest, "model_required")
	}
	switch rq.kind {
	case adaptor.KindImage:
		n, rerr := intField(r[1], "n", 1, MaxImages)
		if rerr != nil {
			return f, rerr
		}
		rq.media.images = max(n, 1)
		rq.media.size, rq.media.quality = r[2].String(), r[3].String()
	case adaptor.KindSpeech:
		if r[4].Type != gjson.String || r[4].Str == "" {
			return f, newErr(http.StatusBadRequest, "validation_failed", "input", "must be a non-empty string")
		}
		rq.media.chars = int64(utf8.RuneCountInString(r[4].Str))
	case adaptor.KindRerank:
		if !r[5].IsArray() {
			return f, newErr(http.StatusBadRequest, "validation_failed", "documents", "must be an array")
		}
		docs := int64(len(r[5].Array()))
		rq.media.searches = max(1, (docs+rerankDocsPerSearch-1)/rerankDocsPerSearch)
	}
	return f, nil
}

// uploadFieldsOf reads an upload's fields like readMediaFields reads a JSON body's.
func uploadFieldsOf(rq *request) (fields, *relayError) {
	u := rq.media.upload
	f := fields{choices: 1, model: u.fields["model"]}
	if f.model == "" {
		return f, newErr(http.StatusBadRequest, "model_required")
	}
	if rq.kind == adaptor.KindImage {
		rq.media.images, rq.media.size, rq.media.quality = 1, u.fields["size"], u.fields["quality"]
		if v, ok := u.fields["n"]; ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 1 || n > MaxImages {
				return f, newErr(http.StatusBadRequest, "validation_failed", "n", "must be an integer from 1 to 10")
			}
			rq.media.images = n
		}
	}
	return f, nil
}

// mediaEstimate is the hold of a media request: what it bills beyond tokens, known from the request (n images
// at their size's price, the speech characters, the searches, the audio's duration from its headers or, when
// they do not say, from its size up to a cap), plus a prompt estimate from the body for token-priced models.
func (r *Relay) mediaEstimate(rq *request) int64 {
	m := rq.media
	est := pricing.Usage{Images: m.images, ImageSize: m.size, ImageQuality: m.quality, Chars: m.chars, Searches: m.searches,
		Input: int64(len(rq.body))/3 + 16}
	if m.images > 0 {
		est.Output = int64(r.Settings.Get().EstimateOutputTokens) * m.images // image models priced by tokens
	}
	if u := m.upload; u != nil && rq.kind == adaptor.KindAudioIn {
		est.AudioMs = u.audio
		if est.AudioMs == 0 {
			est.AudioMs = min(u.size/unknownAudioBytesPerSecond*1000, maxHeldAudio.Milliseconds())
		}
	}
	return pricing.Cost(rq.price, rq.ratio, est)
}

// mediaUsage is what a delivered media answer is billed for: the upstream's own counts where it reported them
// (images returned, audio duration, search units, tokens), else what the request said (the speech characters,
// the audio's header duration, the searches asked for). estimated says a quantity had to be guessed.
func (r *Relay) mediaUsage(rq *request, out *outcome) (pricing.Usage, bool) {
	u, present := out.meter.Usage()
	m := rq.media
	estimated := false
	if !present && (rq.kind == adaptor.KindModerate || rq.kind == adaptor.KindRerank) && rq.price.Input.Sign() > 0 {
		// Token-priced moderation or rerank whose upstream reported no tokens: count the text sent.
		var text strings.Builder
		for _, v := range gjson.GetManyBytes(rq.body, "input", "query", "documents") {
			text.WriteString(v.String())
		}
		u.Input, estimated = int64(r.Counter.Text(rq.model, text.String())), true
	}
	u.ImageSize, u.ImageQuality = m.size, m.quality
	switch rq.kind {
	case adaptor.KindImage:
		if u.Images == 0 {
			u.Images = m.images
		}
	case adaptor.KindSpeech:
		u.Chars = m.chars
	case adaptor.KindRerank:
		if u.Searches == 0 {
			u.Searches = m.searches
		}
	case adaptor.KindAudioIn:
		if u.AudioMs == 0 && m.upload != nil {
			if u.AudioMs = m.upload.audio; u.AudioMs == 0 {
				return u, true // neither the headers nor the upstream said: billed for tokens only
			}
		}
	}
	return u, estimated
}

// mediaAnswer passes a media answer to the client. JSON is read whole (bounded), metered and written like
// any answer; binary (speech) and text (transcriptions as text, srt or vtt) are copied as they arrive,
// flushed after every read, never buffered whole. Nothing is sent before the first bytes arrive, so an
// upstream that fails before them can still be retried.
func (r *Relay) mediaAnswer(c *gin.Context, rq *request, x *exchange, out *outcome) (*outcome, *failure) {
	ct := x.resp.Header.Get("Content-Type")
	if adaptor.Info(out.leg.ep).Answer != adaptor.AnswerBinary && strings.HasPrefix(ct, "application/json") {
		return nil, nil // the JSON path of exchange
	}
	buf := make([]byte, 32<<10)
	n, err := io.ReadAtLeast(x, buf, 1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return out, &failure{class: ClassBadReply, status: x.resp.StatusCode, err: errors.New("upstream answered an empty body")}
		}
		return out, x.readErr(c, err)
	}
	if rerr := rq.awaitReserve(); rerr != nil {
		return out, &failure{class: ClassClient, local: rerr}
	}
	w := c.Writer
	h := w.Header()
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	out.status, out.ok, out.delivered = mappedStatus(out.ch, x.resp.StatusCode), true, true
	w.WriteHeader(out.status)
	for {
		if _, werr := w.Write(buf[:n]); werr != nil {
			err = werr
			break
		}
		w.Flush()
		if n, err = x.Read(buf); n == 0 && err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		return out, nil
	}
	// Cut after the first bytes: the client has a partial answer (audio cannot carry an error event).
	f := x.readErr(c, err)
	out.class, out.errMsg = f.class, f.message()
	return out, nil
}
