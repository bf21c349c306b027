package relay

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/shopspring/decimal"

	"tollgate/relay/adaptor"
	"tollgate/relay/bodyshape"
	"tollgate/relay/convert"
	"tollgate/service/ledger"
	"tollgate/service/pricing"
	"tollgate/service/routing"
	"tollgate/service/usagelog"
)

// request is one admitted relay call.
type request struct {
	id          string // the gateway's own id: the ledger hold and the log row (never the caller's)
	slot        func() // gives the key's concurrency slot back (limit); nil once given back
	clientID    string // the caller's sanitised X-Request-Id, a searchable label in its log row
	ep          adaptor.Endpoint
	proto       adaptor.Protocol // what the caller speaks (routes, auth style, error and answer shapes)
	kind        adaptor.Kind
	canon       *convert.Request // the body in canonical form, parsed on the first translated attempt
	canonErr    *relayError
	forceConv   bool // always re-encode the answer (a Gemini stream asked for as a JSON array, not SSE)
	start       time.Time
	at          time.Time // the relay clock at admission: the log row's time and the key's spend windows
	who         *caller
	model       string
	stream      bool
	injectUsage bool // we asked the upstream for usage: drop its usage-only chunk
	body        []byte
	price       pricing.Price
	ratio       decimal.Decimal
	held        bool
	pending     chan *relayError // a reservation in flight alongside the upstream request
	reserveErr  *relayError      // how that reservation ended
	debug       bool             // an admin asked for route headers (X-Tollgate-Debug: 1)
	limits      deadlines        // the request's time budgets across attempts (deadlines.go)
	pool        routing.Pool     // the groups, routes and channels the request may use (route.go)
	route       *routing.Request // what the selector knows of the request, made once (route.go)
	media       media            // images, audio, speech, rerank: what the request bills beyond tokens (media.go)
	ownPrefs    bool             // the request carried routing preferences of its own (header or body)
	routed      *routed          // the plan and decision (attempt), for the decision log (finish)
	logs        *usagelog.Writer // where the request's log row goes (nil for probes: they write none)
	announced   bool             // the row was announced to logs (announce)
}

// announce tells the log writer, once, that this request's row will be written (its finish is coming), so a
// Flush asked for from now on waits for it. It is called before a complete answer goes to the client
// (writeJSON), so whoever has read the answer and then flushes finds the row; a streamed answer ends at the
// client only when the handler returns, after serve announced it. An in-flight stream is not announced: a
// Flush never waits for one.
func (rq *request) announce() {
	if rq.logs != nil && !rq.announced {
		rq.logs.Begin()
		rq.announced = true
	}
}

func (rq *request) account() ledger.Account {
	t := rq.who.tok
	return ledger.Account{UserID: rq.who.user.ID, TokenID: t.ID, TokenLimited: !t.Unlimited,
		Windows: ledger.Budgets(rq.at, t.DailyBudget, t.MonthlyBudget)}
}

// billable says whether the endpoint costs money (token counting is free).
func (rq *request) billable() bool { return rq.kind != adaptor.KindCount }

// readBody reads at most BodyLimit bytes and checks their shape: one JSON object, not too deep, no key the
// gateway and an upstream could read differently.
func readBody(c *gin.Context) ([]byte, *relayError) {
	if c.Request.ContentLength > BodyLimit {
		return nil, newErr(http.StatusRequestEntityTooLarge, "body_too_large", "32 MiB")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, BodyLimit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newErr(http.StatusRequestEntityTooLarge, "body_too_large", "32 MiB")
		}
		return nil, newErr(http.StatusBadRequest, "bad_request")
	}
	// One iterative pass before anything recursive reads the body (a deep one would overflow the stack).
	if err := bodyshape.Check(body); err != nil {
		var se *bodyshape.Error
		errors.As(err, &se)
		switch {
		case se != nil && se.Code == bodyshape.DuplicateKey:
			return nil, newErr(http.StatusBadRequest, string(se.Code), se.Key)
		case se != nil && se.Code == bodyshape.TooDeep:
			return nil, newErr(http.StatusBadRequest, string(se.Code), bodyshape.MaxDepth)
		case se != nil && se.Code == bodyshape.TooManyKeys:
			return nil, newErr(http.StatusBadRequest, string(se.Code), bodyshape.MaxKeys)
		}
		return nil, newErr(http.StatusBadRequest, "invalid_json")
	}
	return body, nil
}

// call is what the route says about a request: the endpoint, and for Gemini routes the model and
// stream-ness, which travel in the path rather than the body.
type call struct {
	ep        adaptor.Endpoint
	model     string // from the path ("" = read the body's model field)
	stream    bool   // from the path
	sseStream bool   // a Gemini stream asked for with alt=sse (else a JSON array)
}

// serve runs one relay request from admission to the queued usage log.
func (r *Relay) serve(c *gin.Context, cl call) {
	ep := cl.ep
	rq := &request{id: requestID(c), clientID: clientRequestID(c), ep: ep, proto: adaptor.ProtocolOf(ep), kind: adaptor.KindOf(ep),
		start: time.Now(), at: r.now(), logs: r.Logs}
	if rerr := r.limitIP(c); rerr != nil {
		fail(c, rq.proto, rerr)
		return
	}
	who, rerr := r.authenticate(c)
	if rerr != nil {
		fail(c, rq.proto, rerr)
		return
	}
	rq.who = who
	rq.debug = c.GetHeader("X-Tollgate-Debug") != "" && who.user.IsAdmin()
	if adaptor.Info(ep).Body == adaptor.BodyMultipart {
		rq.media.upload, rerr = r.readUpload(c, ep)
		defer rq.media.upload.close()
	} else {
		rq.body, rerr = readBody(c)
	}
	if rerr != nil {
		fail(c, rq.proto, rerr)
		return
	}
	var f fields
	switch {
	case rq.media.upload != nil:
		f, rerr = uploadFieldsOf(rq)
	case rq.kind.Media():
		f, rerr = readMediaFields(rq)
	case cl.model != "":
		f, rerr = readGeminiFields(rq.body, cl.model, cl.stream)
		rq.forceConv = cl.stream && !cl.sseStream
	default:
		f, rerr = readFields(rq.body, ep == adaptor.ChatCompletions || ep == adaptor.Completions, ep == adaptor.Completions)
	}
	if rerr != nil {
		fail(c, rq.proto, rerr)
		return
	}
	rq.model = f.model
	rq.stream = f.stream && (rq.kind == adaptor.KindGenerate || rq.kind == adaptor.KindCompletion)
	rq.injectUsage = rq.stream && (ep == adaptor.ChatCompletions || ep == adaptor.Completions) && !f.includeUsage
	if !who.modelAllowed(rq.model) {
		fail(c, rq.proto, newErr(http.StatusForbidden, "model_not_allowed", rq.model))
		return
	}
	prefs, rerr := r.routePrefs(c.Request.Header, rq)
	if rerr != nil {
		fail(c, rq.proto, rerr)
		return
	}
	rq.pool, rq.route = r.Routing.Pool(who.groups, rq.model), r.routeRequest(rq)
	rq.route.Prefs = prefs
	price, priced := r.Pricing.Lookup(rq.model)
	if s := r.Routing.Strategy(rq.route); s == routing.StrategyCost || s == routing.StrategyBalanced || prefs.MaxPrice > 0 {
		rq.route.SellPer1M = sellPer1M(price) // a channel without an upstream price costs the sell price
	}
	if priced && !r.poolServes(rq.pool, rq) {
		// 503 only when channels of this endpoint serve the model but are disabled right now; a 4xx when it
		// is served on another endpoint only (an SDK retries a 503 forever).
		fail(c, rq.proto, r.unserved(who.groups, rq))
		return
	}
	if !priced {
		fail(c, rq.proto, newErr(http.StatusNotFound, "model_not_found", rq.model))
		return
	}
	// The hold is at the dearest group the request may be served by (a fallback may cost more); the
	// settlement is at the group that served (attempt).
	rq.price, rq.ratio = price, r.holdRatio(rq)
	release, rerr := r.limit(c.Request.Context(), who, rq.at)
	if rerr != nil {
		fail(c, rq.proto, rerr)
		return
	}
	rq.slot = release
	defer rq.freeSlot()
	if rq.billable() {
		hold := r.estimate(rq, f.maxOut, f.choices)
		if r.Headroom != nil && !r.reservesInProcess(rq, hold) && r.Headroom.Ample(rq, hold) {
			rq.pending = make(chan *relayError, 1)
			ctx := context.WithoutCancel(c.Request.Context())
			go func() { rq.pending <- r.reserve(ctx, rq, hold) }()
		} else {
			if rerr := r.reserve(c.Request.Context(), rq, hold); rerr != nil {
				fail(c, rq.proto, rerr)
				return
			}
			rq.held = true
		}
	}
	// A panic after a JSON answer announced the row (in the attempt's bookkeeping) must not leave the log
	// writer waiting for a row that never comes: Flush and shutdown would wait for their whole timeout.
	handedOff := false
	defer func() {
		if rq.announced && !handedOff {
			r.Logs.End()
		}
	}()
	out := r.attempt(c, rq)
	// The answer is complete: settle and log after the handler returns, so the money and log round trips
	// never delay the client or the next request on its connection. The writer counts the entry as
	// announced (a JSON answer was announced before it went out), so Flush and shutdown wait for it; the
	// announcement passes to the finishing (a finisher), which withdraws it when the row is queued.
	fin := finishing{ip: c.ClientIP(), ctx: context.WithoutCancel(c.Request.Context())}
	rq.announce()
	handedOff = true
	r.finishers.run(func() {
		defer r.Logs.End()
		r.finish(fin, rq, out)
	})
}

// freeSlot gives the key's concurrency slot back, once.
func (rq *request) freeSlot() {
	if rq.slot != nil {
		rq.slot()
		rq.slot = nil
	}
}

// reservesInProcess reports whether the ledger answers this reservation without a round trip (a node-local
// lease has room): then it is simply made, not overlapped with the upstream call.
func (r *Relay) reservesInProcess(rq *request, hold int64) bool {
	c, ok := r.Ledger.(interface {
		Covers(ledger.Account, int64) bool
	})
	return ok && c.Covers(rq.account(), hold)
}

// finishing is what finish needs from the request after its gin context is recycled.
type finishing struct {
	ip  string
	ctx context.Context
}

// holdRatio is the highest price ratio among the groups of rq's pool (the key's group's when it has none).
func (r *Relay) holdRatio(rq *request) decimal.Decimal {
	ratio := r.ratioFor(rq.who.group, rq.who.user.Tier)
	for _, g := range rq.pool {
		if x := r.ratioFor(g.Group.Name, rq.who.user.Tier); x.GreaterThan(ratio) {
			ratio = x
		}
	}
	return ratio
}

// estimate is the hold: a generous prompt estimate from the body size (no tokenizer on the hot path) plus
// max_tokens, or the configured output cap, at the output price, once per choice (n).
func (r *Relay) estimate(rq *request, maxOut, choices int64) int64 {
	if rq.kind.Media() {
		return r.mediaEstimate(rq)
	}
	est := pricing.Usage{Input: int64(len(rq.body))/3 + 16}
	if rq.kind != adaptor.KindEmbed {
		est.Output = maxOut
		if est.Output <= 0 {
			est.Output = int64(r.Settings.Get().EstimateOutputTokens)
		}
		est.Output *= choices // ≤ 10^7 × 128: no overflow, and Cost clamps the product with the price
	}
	return pricing.Cost(rq.price, rq.ratio, est)
}

// awaitReserve waits for a reservation sent alongside the upstream request and records whether it holds.
// It is called from the request goroutine before the first byte goes to the client, and again (a no-op)
// by finish.
func (rq *request) awaitReserve() *relayError {
	if rq.pending != nil {
		rq.reserveErr = <-rq.pending
		rq.pending = nil
		rq.held = rq.reserveErr == nil
	}
	return rq.reserveErr
}

// reserve places the hold on the ledger.
func (r *Relay) reserve(ctx context.Context, rq *request, hold int64) *relayError {
	err := r.Ledger.Reserve(ctx, rq.id, rq.account(), hold)
	var be *ledger.BudgetError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &be):
		return budgetRefusal(be.Window.End.Sub(rq.at))
	case errors.Is(err, ledger.ErrInsufficientToken):
		return moneyRefusal(rq.proto, "key_quota_exhausted")
	case errors.Is(err, ledger.ErrInsufficient):
		return moneyRefusal(rq.proto, "insufficient_quota")
	}
	return newErr(http.StatusServiceUnavailable, "cache_unavailable")
}
