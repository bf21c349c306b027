// Package metrics holds Tollgate's Prometheus collectors on a registry of its own (no global state).
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the collectors the relay and the background workers update.
type Metrics struct {
	Registry  *prometheus.Registry
	Requests  *prometheus.CounterVec
	Latency   *prometheus.HistogramVec
	FirstByte *prometheus.HistogramVec
	Attempts  *prometheus.CounterVec
}

// Sources are read at scrape time.
type Sources struct {
	ChannelStates func() map[int64]string // channel id → closed/half_open/open/disabled
	LogQueue      func() int64            // usage log rows accepted, not yet committed
	LogLastFlush  func() time.Time        // last successful commit
	Settling      func() int64            // requests answered and still settling with the ledger
}

var stateValue = map[string]float64{"closed": 0, "half_open": 1, "open": 2, "disabled": 3}

// New builds the collectors and registers them with the process and Go collectors.
func New(src Sources) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_requests_total",
			Help: "Relayed requests by model, channel, HTTP status and error class."}, []string{"model", "channel", "status", "class"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tollgate_request_duration_seconds",
			Help: "Whole relayed request duration.", Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)}, []string{"model"}),
		FirstByte: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tollgate_first_byte_seconds",
			Help: "Time to the first byte sent to the client.", Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)}, []string{"model"}),
		Attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_upstream_attempts_total",
			Help: "Upstream attempts by channel and error class (empty class: success)."}, []string{"channel", "class"}),
	}
	reg.MustRegister(m.Requests, m.Latency, m.FirstByte, m.Attempts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.ChannelStates != nil {
		reg.MustRegister(&stateCollector{fn: src.ChannelStates, desc: prometheus.NewDesc("tollgate_channel_state",
			"Breaker state per channel: 0 closed, 1 half-open, 2 open, 3 disabled.", []string{"channel"}, nil)})
	}
	if src.LogQueue != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_log_queue_depth",
			Help: "Usage log rows (and their balance changes) waiting for the batched writer."}, func() float64 { return float64(src.LogQueue()) }))
	}
	if src.Settling != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_ledger_settling",
			Help: "Requests answered whose settlement with the ledger is still in flight."}, func() float64 { return float64(src.Settling()) }))
	}
	if src.LogLastFlush != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_log_flush_lag_seconds",
			Help: "Seconds since the batched writer last committed."}, func() float64 {
			t := src.LogLastFlush()
			if t.IsZero() {
				return 0
			}
			return time.Since(t).Seconds()
		}))
	}
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

type stateCollector struct {
	fn   func() map[int64]string
	desc *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for id, st := range c.fn() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, stateValue[st], strconv.FormatInt(id, 10))
	}
}
