// Package relay is the hot path: it admits an sk- key's request, reserves its estimated cost, tries upstream
// channels until one answers, passes the answer through (SSE event by event), meters usage, settles the
// exact cost and queues one usage log. It makes no synchronous SQL round trip on a warm cache.
package relay

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/relay/adaptor"
	"tollgate/service/account"
	"tollgate/service/cache"
	"tollgate/service/channel"
	"tollgate/service/group"
	"tollgate/service/health"
	"tollgate/service/ledger"
	"tollgate/service/metrics"
	"tollgate/service/pricing"
	"tollgate/service/routing"
	"tollgate/service/setting"
	"tollgate/service/sticky"
	"tollgate/service/token"
	"tollgate/service/tokencount"
	"tollgate/service/usagelog"
)

// BodyLimit caps a relay request body (images travel base64 inside it).
const BodyLimit = 32 << 20

// ResponseLimit caps a non-stream upstream answer read into memory.
const ResponseLimit = 64 << 20

// EventLimit bounds one SSE event of an upstream stream (a line without end, or a huge event, is a bad reply).
const EventLimit = 16 << 20

// Defaults for channels that set no timeout of their own.
var defaultTimeouts = struct{ connect, firstByte, idle, total time.Duration }{
	connect: 10 * time.Second, firstByte: 5 * time.Minute, idle: 2 * time.Minute, total: 30 * time.Minute,
}

// Deps are the services the relay uses.
type Deps struct {
	Tokens   *token.Service
	Accounts *account.Service
	Groups   *group.Service
	Channels *channel.Service
	Pricing  *pricing.Service
	Settings *setting.Service
	Ledger   ledger.Ledger
	Logs     *usagelog.Writer
	Cache    cache.Cache
	Counter  *tokencount.Counter
	Adaptors adaptor.Registry
	Client   *http.Client
	Health   *health.Tracker
	Sticky   *sticky.Store
	Routing  *routing.Engine // groups → routes → channels, the selector and the route breakers
	Tiers    TierRatios      // user tier ratios (nil: every tier is 1)
	Fleet    FleetRecorder   // fleet-wide metrics (nil: none)
	Metrics  *metrics.Metrics
	Headroom *Headroom // non-nil: overlap the reservation with the upstream call (remote ledgers)
	Alerts   AlertSink // nil: no alerts (service/alert hears finished requests and disabled keys)
	// Decisions keeps routing decisions in their own table (nil: none).
	Decisions DecisionSink
	// Clock is the time a request is admitted at, which places it in its key's spend windows and dates its
	// log row (nil: time.Now); tests move it across a day or month boundary.
	Clock func() time.Time
	// UploadDir is where multipart uploads are spooled while a request runs ("": the system's temp dir).
	UploadDir string
}

// Relay serves the /v1 routes.
type Relay struct {
	Deps
	intn func(int) int
	// streamBufs holds the read buffers and event scratch of finished streams for the next ones: a thousand
	// concurrent streams hold a small buffer each instead of allocating one per stream.
	streamBufs sync.Pool
	finishers  finishers // run each answered request's settlement and log row (finishers.go)
}

// New builds the relay.
func New(d Deps) *Relay {
	return &Relay{Deps: d, intn: rand.IntN}
}

// Close ends the goroutines that finish answered requests once they have finished what is queued; call it
// after the requests have settled (App.Close). A request finished later gets a goroutine of its own.
func (r *Relay) Close() { r.finishers.close() }

func (r *Relay) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}

// Register adds the /v1 routes to the engine.
// NotFound answers a relay path no route matched: 404 route_not_found in the protocol the path belongs to
// (Gemini under /v1beta, Anthropic under /v1/messages, OpenAI elsewhere), so SDKs read it as an error.
func (r *Relay) NotFound(c *gin.Context) {
	p := c.Request.URL.Path
	proto := adaptor.OpenAI
	switch {
	case strings.HasPrefix(p, "/v1beta"):
		proto = adaptor.Gemini
	case strings.HasPrefix(p, "/v1/messages"):
		proto = adaptor.Anthropic
	}
	fail(c, proto, newErr(http.StatusNotFound, "route_not_found"))
}

func (r *Relay) Register(e *gin.Engine) {
	for _, ep := range adaptor.Endpoints() {
		if adaptor.ProtocolOf(ep) != adaptor.Gemini { // Gemini's routes carry the model (gemini.go)
			e.POST(adaptor.Info(ep).Route, r.handler(ep))
		}
	}
	e.GET("/v1/models", r.models)
	r.registerGemini(e)
}

func (r *Relay) handler(ep adaptor.Endpoint) gin.HandlerFunc {
	return func(c *gin.Context) { r.serve(c, call{ep: ep}) }
}

// requestID returns the id the request-id middleware gave this request.
func requestID(c *gin.Context) string { return middleware.RequestID(c) }

// clientRequestID returns the caller's sanitised X-Request-Id ("" when none): a label, not the id.
func clientRequestID(c *gin.Context) string { return middleware.ClientRequestID(c) }
