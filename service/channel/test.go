package channel

import "time"

// TestResult is what one channel test found.
type TestResult struct {
	ChannelID   int64  `json:"channel_id"`
	OK          bool   `json:"ok"`
	Model       string `json:"model"`
	KeyIndex    int    `json:"key_index"`
	Status      int    `json:"status"`
	LatencyMs   int64  `json:"latency_ms"`
	FirstByteMs int64  `json:"first_byte_ms"`
	ErrorClass  string `json:"error_class,omitempty"`
	Error       string `json:"error,omitempty"`
}

// TestJob is a running or finished "test many channels" job.
type TestJob struct {
	ID      string       `json:"id"`
	Total   int          `json:"total"`
	Done    int          `json:"done"`
	Results []TestResult `json:"results"`
	Started time.Time    `json:"started_at"`
	Ended   *time.Time   `json:"ended_at,omitempty"`
}
