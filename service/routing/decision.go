package routing

import "encoding/json"

// maxConsidered bounds the steps a decision keeps (the log row stays small on a big pool).
const maxConsidered = 64

// Decision is how a request was routed: the policy, each candidate considered in order (skipped ones with
// the reason, failed attempts with their class) and the choice that answered. The attempt loop fills it; the
// log row stores it for admins.
type Decision struct {
	Policy     string       `json:"policy"`
	Sticky     string       `json:"sticky,omitempty"` // hit, moved, returned (to the primary route) or miss
	Considered []Considered `json:"considered"`
	Chosen     *Choice      `json:"chosen,omitempty"`
	Truncated  bool         `json:"truncated,omitempty"`
}

// Considered is one step.
type Considered struct {
	Group     string `json:"group"`
	Route     string `json:"route"`
	ChannelID int64  `json:"channel_id"`
	KeyIndex  *int   `json:"key_index,omitempty"`
	Skipped   bool   `json:"skipped,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Choice is the candidate that answered.
type Choice struct {
	Group     string `json:"group"`
	Route     string `json:"route"`
	ChannelID int64  `json:"channel_id"`
	KeyIndex  int    `json:"key_index"`
}

func (d *Decision) add(c Considered) {
	if len(d.Considered) >= maxConsidered {
		d.Truncated = true
		return
	}
	d.Considered = append(d.Considered, c)
}

// Skip records a candidate left out and why.
func (d *Decision) Skip(group, route string, channelID int64, reason string) {
	d.add(Considered{Group: group, Route: route, ChannelID: channelID, Skipped: true, Reason: reason})
}

// Tried records an attempt on a key that did not answer; reason is its failure class.
func (d *Decision) Tried(group, route string, channelID int64, key int, reason string) {
	d.add(Considered{Group: group, Route: route, ChannelID: channelID, KeyIndex: &key, Reason: reason})
}

// Choose records the attempt that answered.
func (d *Decision) Choose(group, route string, channelID int64, key int) {
	d.add(Considered{Group: group, Route: route, ChannelID: channelID, KeyIndex: &key})
	d.Chosen = &Choice{Group: group, Route: route, ChannelID: channelID, KeyIndex: key}
}

// JSON renders the decision for the log row.
func (d *Decision) JSON() json.RawMessage {
	b, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return b
}
