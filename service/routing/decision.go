package routing

import (
	"encoding/json"
	"fmt"
	"time"

	"tollgate/model"
)

// maxConsidered bounds the steps a decision keeps (the log row stays small on a big pool).
const maxConsidered = 64

// Decision is how a request was routed: the policy, each candidate considered in order (skipped ones with
// the reason, failed attempts with their class) and the choice that answered. The attempt loop fills it; the
// log row stores it for admins.
type Decision struct {
	Policy     string       `json:"policy"` // the strategy
	DecisionUs int64        `json:"decision_us"`
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

// Ranked is one candidate as the simulator and the decision log show it: its place, score and inputs (for the
// metric strategies, or when asked), or why a preference excluded it.
type Ranked struct {
	ChannelID int64   `json:"channel_id"`
	Name      string  `json:"name"`
	Tag       string  `json:"tag,omitempty"` // the channel's provider tag
	Group     string  `json:"group"`
	Route     string  `json:"route"`
	Score     float64 `json:"score"`
	Share     float64 `json:"share"`
	Inputs    *Inputs `json:"inputs,omitempty"`
	Exploring bool    `json:"exploring,omitempty"`
	Demoted   bool    `json:"demoted,omitempty"`
	Excluded  bool    `json:"excluded,omitempty"`
	Pref      string  `json:"pref,omitempty"` // the preference that excluded it
	Reason    string  `json:"reason"`
}

// Ranking lists a plan's candidates in order, then the excluded ones. Strategies without scores show each
// candidate's rank; withInputs adds every candidate's inputs (the simulator), which the metric strategies
// always carry.
func (e *Engine) Ranking(p Pool, plan Plan, rq *Request, withInputs bool) []Ranked {
	out := make([]Ranked, 0, len(plan.Candidates)+len(plan.Excluded))
	for i, c := range plan.Candidates {
		r := Ranked{ChannelID: c.Channel.ID, Name: c.Channel.Name, Tag: c.Channel.Tag, Group: p[c.Group].Group.Name, Route: c.Route.Name}
		if i < len(plan.Scores) && plan.Scores[i].ChannelID == c.Channel.ID {
			s := plan.Scores[i]
			in := s.Inputs
			r.Score, r.Share, r.Inputs, r.Exploring, r.Demoted, r.Reason = s.Score, s.Share, &in, s.Exploring, s.Demoted, s.Why()
		} else {
			r.Reason = fmt.Sprintf("%s, rank %d", plan.Strategy, i+1)
			if withInputs {
				in := e.inputs(c.Channel, rq, &rq.Tuning)
				r.Inputs = &in
			}
		}
		out = append(out, r)
	}
	for _, x := range plan.Excluded {
		r := Ranked{ChannelID: x.ChannelID, Name: x.Name, Group: p[x.Group].Group.Name, Excluded: true, Pref: x.Pref, Reason: x.Reason}
		if ch := e.current().ch.ByID[x.ChannelID]; ch != nil {
			r.Tag = ch.Tag
			if withInputs {
				in := e.inputs(ch, rq, &rq.Tuning)
				r.Inputs = &in
			}
		}
		out = append(out, r)
	}
	return out
}

// Row is the decision log's row for a routed request: the ranking (without the inputs the strategy did not
// use), the decision's steps, and the channel that answered.
func (e *Engine) Row(reqID string, userID int64, p Pool, plan Plan, rq *Request, d *Decision) model.RoutingDecision {
	row := model.RoutingDecision{RequestID: reqID, CreatedAt: time.Now().UTC(), Model: rq.Model, UserID: userID,
		Strategy: plan.Strategy, DecisionUs: plan.Took.Microseconds()}
	if len(p) > 0 {
		row.Group = p[0].Group.Name
	}
	if d != nil && d.Chosen != nil {
		row.ChannelID = d.Chosen.ChannelID
		row.Reason = "answered"
		if len(plan.Candidates) > 0 && plan.Candidates[0].Channel.ID != d.Chosen.ChannelID {
			row.Reason = "fallback"
		}
	} else {
		row.Reason = "no channel answered"
	}
	if len(plan.Scores) > 0 && plan.Scores[0].ChannelID == row.ChannelID {
		row.Reason += ": " + plan.Scores[0].Why()
	}
	body := struct {
		Ranking []Ranked          `json:"ranking"`
		Steps   []Considered      `json:"steps,omitempty"`
		Prefs   *model.RoutePrefs `json:"prefs,omitempty"`
	}{Ranking: e.Ranking(p, plan, rq, false)}
	if d != nil {
		body.Steps = d.Considered
	}
	if !rq.Prefs.Empty() {
		body.Prefs = &rq.Prefs
	}
	b, _ := json.Marshal(body)
	row.Candidates = model.JSON[json.RawMessage]{V: b}
	if len(row.Reason) > 255 {
		row.Reason = row.Reason[:255]
	}
	return row
}
