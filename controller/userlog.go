package controller

import (
	"strings"
	"time"

	"tollgate/i18n"
	"tollgate/model"
	"tollgate/service/usagelog"
)

// userLog is a usage log as its owner sees it in GET /api/logs. It lists the fields a user may read, one by
// one, so a new column of model.UsageLog stays admin-only until someone adds it here on purpose. Left out:
// raw upstream error text the user was not sent, channel ids, attempts, the upstream (mapped) model, sticky
// routing notes and test flags. The channel name is there only when the admin turns show_channel_to_users on.
type userLog struct {
	ID               int64                `json:"id"`
	RequestID        string               `json:"request_id"`
	ClientRequestID  string               `json:"client_request_id"`
	CreatedAt        time.Time            `json:"created_at"`
	UserID           int64                `json:"user_id"`
	Username         string               `json:"username"`
	TokenID          int64                `json:"token_id"`
	TokenName        string               `json:"token_name"`
	Model            string               `json:"model"`
	Endpoint         string               `json:"endpoint"`
	Stream           bool                 `json:"stream"`
	PromptTokens     int64                `json:"prompt_tokens"`
	CompletionTokens int64                `json:"completion_tokens"`
	CacheReadTokens  int64                `json:"cache_read_tokens"`
	CacheWriteTokens int64                `json:"cache_write_tokens"`
	UsageEstimated   bool                 `json:"usage_estimated"`
	Cost             int64                `json:"cost"`
	Price            model.PriceBreakdown `json:"price"`
	GroupRatio       string               `json:"group_ratio"`
	Group            string               `json:"group"`
	Route            string               `json:"route"`
	Status           string               `json:"status"`
	HTTPStatus       int                  `json:"http_status"`
	ErrorClass       string               `json:"error_class"`
	ErrorCode        string               `json:"error_code"`
	// Error is a gateway-written message for ErrorCode, or the upstream's own text when that text was what
	// the client received (a client error passed through).
	Error       string `json:"error"`
	ElapsedMs   int64  `json:"elapsed_ms"`
	FirstByteMs int64  `json:"first_byte_ms"`
	ClientIP    string `json:"client_ip"`
	ChannelName string `json:"channel_name,omitempty"`
	// ClientProtocol is what the caller spoke; UpstreamProtocol what its channel was sent, shown (like the
	// channel) only when show_channel_to_users is on: it says something of the reseller's supply.
	ClientProtocol   string `json:"client_protocol"`
	UpstreamProtocol string `json:"upstream_protocol,omitempty"`
}

// toUserLog builds the owner's view of l; showChannel adds the channel name.
func toUserLog(l *model.UsageLog, lang i18n.Lang, showChannel bool) userLog {
	u := userLog{
		ID: l.ID, RequestID: l.RequestID, ClientRequestID: l.ClientRequestID, CreatedAt: l.CreatedAt,
		UserID: l.UserID, Username: l.Username, TokenID: l.TokenID, TokenName: l.TokenName, Model: l.Model,
		Endpoint: l.Endpoint, Stream: l.Stream, PromptTokens: l.PromptTokens, CompletionTokens: l.CompletionTokens,
		CacheReadTokens: l.CacheReadTokens, CacheWriteTokens: l.CacheWriteTokens, UsageEstimated: l.UsageEstimated,
		Cost: l.Cost, Price: l.Price.V, GroupRatio: l.GroupRatio, Group: l.Group, Route: l.Route, Status: l.Status, HTTPStatus: l.HTTPStatus,
		ErrorClass: l.ErrorClass, ElapsedMs: l.ElapsedMs, FirstByteMs: l.FirstByteMs, ClientIP: l.ClientIP,
	}
	u.ClientProtocol = l.ClientProtocol
	if showChannel {
		u.ChannelName, u.UpstreamProtocol = l.ChannelName, l.UpstreamProtocol
	}
	if l.Status == "error" {
		u.ErrorCode = l.ErrorCode
		if u.ErrorCode == "" { // a row written before error codes were stored
			u.ErrorCode = usagelog.ClassCode(l.ErrorClass)
		}
		if l.ErrorShown {
			u.Error = l.Error
		} else {
			u.Error = logMessage(lang, u.ErrorCode, l.ErrorClass)
		}
	}
	return u
}

// logMessage is the gateway's sentence for an error code. Codes whose catalog message needs arguments (a
// model name, upstream detail) fall back to the message of the failure class, then to a generic one: the
// log has no arguments to give and must not print a bare format verb.
func logMessage(lang i18n.Lang, code, class string) string {
	for _, c := range []string{code, usagelog.ClassCode(class), "request_failed"} {
		if !i18n.Has(c) {
			continue
		}
		if msg := i18n.T(lang, c); !strings.Contains(msg, "%") {
			return msg
		}
	}
	return i18n.T(lang, "request_failed")
}
