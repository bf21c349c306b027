package routing

import (
	"fmt"
	"math"

	"tollgate/model"
	"tollgate/service/channel"
	"tollgate/service/health"
)

// Inputs are what a channel's score was computed from (shown in decisions and the simulator).
type Inputs struct {
	Success     float64 `json:"success"`    // blended: node/fleet periods with the live EWMA
	LatencyMs   float64 `json:"latency_ms"` // blended like Success
	FirstByteMs float64 `json:"first_byte_ms,omitempty"`
	P95Ms       float64 `json:"p95_ms,omitempty"`
	Price       float64 `json:"price"`            // USD per 1M tokens (mean of input and output) the upstream charges
	Samples     float64 `json:"samples"`          // samples behind the periods' numbers
	Source      string  `json:"source,omitempty"` // node, fleet or "" (no data yet)
	Active      int64   `json:"active"`           // attempts in flight on this node
	LiveSamples int64   `json:"live_samples"`     // outcomes behind the node's live EWMA
	LatencyS    float64 `json:"latency_score"`
	SuccessS    float64 `json:"success_score"`
	CostS       float64 `json:"cost_score"`
}

// Score is one candidate's place in a metric-driven ranking.
type Score struct {
	Group     int     `json:"-"`
	ChannelID int64   `json:"channel_id"`
	Name      string  `json:"name"`
	Score     float64 `json:"score"`
	Share     float64 `json:"share"` // its chance of the first pick
	Inputs    Inputs  `json:"inputs"`
	Exploring bool    `json:"exploring,omitempty"` // too few samples: scored neutral, given the exploration share
	Demoted   bool    `json:"demoted,omitempty"`   // failure rate above the threshold: last, explored after recovery_s
	Preferred bool    `json:"preferred,omitempty"` // moved first by the caller's prefer
	TopK      int     `json:"-"`                   // the k of the top-k it was ranked in
	Rank      int     `json:"rank"`                // its place by score (1 = best)
}

// Why says in words where the score put the candidate (built only when a decision is shown or logged).
func (s *Score) Why() string {
	var r string
	switch {
	case s.Exploring:
		r = "exploring: fewer than min_samples"
	case s.Demoted:
		r = fmt.Sprintf("demoted: failure rate %.2f above failure_threshold", 1-s.Inputs.Success)
	case s.Rank <= s.TopK:
		r = fmt.Sprintf("top-%d, rank %d", s.TopK, s.Rank)
	default:
		r = fmt.Sprintf("fallback, rank %d", s.Rank)
	}
	if s.Preferred {
		r = "preferred; " + r
	}
	return r
}

// inputs gathers a channel's inputs for m: the book's snapshot blended with the node's live EWMA (weight
// lw), its price, and the sub-scores.
func (e *Engine) inputs(ch *channel.Channel, rq *Request, t *model.RouteTuning) Inputs {
	var in Inputs
	if e.Book != nil {
		if s, ok := e.Book.Stat(ch.ID, rq.Model); ok {
			in.Success, in.LatencyMs, in.FirstByteMs, in.P95Ms, in.Samples, in.Source = s.Success, s.LatencyMs, s.FirstByteMs, s.P95Ms, s.Samples, s.Source
		}
	}
	if e.Live != nil {
		lv := e.Live(ch.ID)
		in.Active, in.LiveSamples = lv.Active, lv.Samples
		if lv.Samples > 0 {
			lw := t.LiveWeight
			if in.Source == "" {
				lw = 1
			}
			in.Success = (1-lw)*in.Success + lw*lv.SuccessEWMA
			if lv.LatencyEWMAms > 0 {
				if in.LatencyMs == 0 {
					in.LatencyMs = lv.LatencyEWMAms
				} else {
					in.LatencyMs = (1-lw)*in.LatencyMs + lw*lv.LatencyEWMAms
				}
			}
		}
	}
	in.Price = e.current().price(ch, rq)
	lat := in.LatencyMs
	if in.FirstByteMs > 0 {
		lat = (in.LatencyMs + in.FirstByteMs) / 2
	}
	in.LatencyS = t.LatencyRefMs / (t.LatencyRefMs + lat)
	in.SuccessS = math.Min(1, math.Max(0, (in.Success-0.5)/0.5))
	in.CostS = t.CostRef / (t.CostRef + in.Price)
	return in
}

// chPrice is a channel's upstream prices as floats (decimals are converted once per snapshot, not per request).
type chPrice struct {
	models   map[string]float64
	all      float64
	hasAll   bool
	ratio    float64
	hasRatio bool
}

func priceTable(ch *channel.Channel) chPrice {
	p := chPrice{}
	if len(ch.CostPrices.V) > 0 {
		p.models = make(map[string]float64, len(ch.CostPrices.V))
		for m, c := range ch.CostPrices.V {
			p.models[m] = costMean(c)
		}
	}
	if c := ch.CostPrice.V; c != nil {
		p.all, p.hasAll = costMean(*c), true
	}
	if ch.CostRatio.Valid {
		p.ratio, _ = ch.CostRatio.Decimal.Float64()
		p.hasRatio = true
	}
	return p
}

// price is what the upstream charges for rq's model in USD per 1M tokens (mean of input and output): the
// channel's price for the model, else its price for every model, else the sell price × cost_ratio, else the
// sell price.
func (ix *index) price(ch *channel.Channel, rq *Request) float64 {
	p := ix.prices[ch]
	if v, ok := p.models[rq.Model]; ok {
		return v
	}
	switch {
	case p.hasAll:
		return p.all
	case p.hasRatio:
		return rq.SellPer1M * p.ratio
	}
	return rq.SellPer1M
}

func costMean(p model.CostPrice) float64 {
	in, _ := p.Input.Float64()
	out, _ := p.Output.Float64()
	return (in + out) / 2
}

// weightsFor are the strategy's weights: performance is latency and success (the tuning's ratio of the two,
// or 0.4 : 0.6), cost is cost with success as a tie-break (0.9 : 0.1), balanced is the tuning's weights.
func weightsFor(strategy string, t *model.RouteTuning) model.RouteWeights {
	switch strategy {
	case StrategyPerformance:
		w := model.RouteWeights{Latency: t.Weights.Latency, Success: t.Weights.Success}
		if w.Latency+w.Success == 0 || t.Weights == Defaults.Weights {
			w = model.RouteWeights{Latency: 0.4, Success: 0.6}
		}
		return w
	case StrategyCost:
		return model.RouteWeights{Success: 0.1, Cost: 0.9}
	}
	return t.Weights
}

// blend is the weighted mean of the sub-scores.
func blend(in *Inputs, w model.RouteWeights) float64 {
	sum := w.Latency + w.Success + w.Cost
	if sum <= 0 {
		return 0
	}
	return (w.Latency*in.LatencyS + w.Success*in.SuccessS + w.Cost*in.CostS) / sum
}

// shares gives the first-pick probabilities of the top-k scores (sorted descending): a softmax at the
// tuning's temperature, with every one of them guaranteed min_share, so no healthy channel starves.
func shares(scores []float64, t *model.RouteTuning, out []float64) {
	k := len(scores)
	if k == 0 {
		return
	}
	floor := t.MinShare
	if float64(k)*floor > 1 {
		floor = 1 / float64(k)
	}
	temp := max(t.Temperature, 1e-6)
	total := 0.0
	for i, s := range scores {
		out[i] = math.Exp((s - scores[0]) / temp)
		total += out[i]
	}
	for i := range out[:k] {
		out[i] = floor + (1-float64(k)*floor)*out[i]/total
	}
}

// LiveOf reads a channel's live numbers (health.Tracker.Live).
type LiveOf func(channelID int64) health.Live
