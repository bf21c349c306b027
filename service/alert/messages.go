package alert

import (
	"fmt"
	"html"
	"strings"

	"github.com/shopspring/decimal"

	"tollgate/service/setting"
)

func usd(units any) string {
	n, ok := units.(int64)
	if !ok {
		return fmt.Sprint(units)
	}
	return decimal.New(n, -6).String() + " USD"
}

// render writes an event as a subject, a plain-text body and an HTML body, in zh-CN when lang asks for
// Chinese and in English otherwise.
func render(ev Event, lang string) (subject, text, htmlBody string) {
	zh := strings.HasPrefix(strings.ToLower(lang), "zh")
	d := ev.Data
	pick := func(en, cn string) string {
		if zh {
			return cn
		}
		return en
	}
	switch ev.Name {
	case setting.EventChannelOpened:
		subject = pick(fmt.Sprintf("Channel %v is failing: breaker open", d["channel"]), fmt.Sprintf("渠道 %v 故障：熔断器已打开", d["channel"]))
		text = pick(fmt.Sprintf("The breaker of channel %v (id %v) opened: requests go to other channels until it recovers.", d["channel"], d["channel_id"]),
			fmt.Sprintf("渠道 %v（id %v）的熔断器已打开：在恢复之前，请求将转到其他渠道。", d["channel"], d["channel_id"]))
	case setting.EventChannelRecovered:
		subject = pick(fmt.Sprintf("Channel %v recovered", d["channel"]), fmt.Sprintf("渠道 %v 已恢复", d["channel"]))
		text = pick(fmt.Sprintf("The breaker of channel %v (id %v) closed again after being open.", d["channel"], d["channel_id"]),
			fmt.Sprintf("渠道 %v（id %v）的熔断器在打开后已重新关闭。", d["channel"], d["channel_id"]))
	case setting.EventChannelAutoDisabled:
		subject = pick(fmt.Sprintf("Channel %v was disabled automatically", d["channel"]), fmt.Sprintf("渠道 %v 已被自动禁用", d["channel"]))
		text = pick(fmt.Sprintf("Every key of channel %v (id %v) was refused by the upstream; the channel is now auto_disabled.", d["channel"], d["channel_id"]),
			fmt.Sprintf("渠道 %v（id %v）的所有密钥都被上游拒绝，该渠道已被自动禁用。", d["channel"], d["channel_id"]))
	case setting.EventKeyDisabled:
		subject = pick(fmt.Sprintf("An upstream key of channel %v was disabled", d["channel"]), fmt.Sprintf("渠道 %v 的一个上游密钥已被禁用", d["channel"]))
		text = pick(fmt.Sprintf("Key #%v of channel %v (id %v) was refused (%v) and is disabled.", d["key_index"], d["channel"], d["channel_id"], d["class"]),
			fmt.Sprintf("渠道 %v（id %v）的密钥 #%v 被拒绝（%v），已被禁用。", d["channel"], d["channel_id"], d["key_index"], d["class"]))
	case setting.EventModelErrorRate:
		subject = pick(fmt.Sprintf("Model %v: error rate %v", d["model"], d["error_rate"]), fmt.Sprintf("模型 %v：错误率 %v", d["model"], d["error_rate"]))
		text = pick(fmt.Sprintf("Model %v failed %v of %v requests in the last %v s (threshold %v).", d["model"], d["errors"], d["requests"], d["window_s"], d["threshold"]),
			fmt.Sprintf("模型 %v 在最近 %v 秒内 %v 个请求中失败 %v 个（阈值 %v）。", d["model"], d["window_s"], d["requests"], d["errors"], d["threshold"]))
	case setting.EventBalanceLow:
		subject = pick("Your balance is running low", "您的余额不足")
		text = pick(fmt.Sprintf("Hello %v, your balance is %v, below the %v you asked to be told about. Top up to keep your API keys working.", d["username"], usd(d["balance"]), usd(d["threshold"])),
			fmt.Sprintf("%v 您好，您的余额为 %v，已低于您设置的提醒阈值 %v。请及时充值，以免 API 密钥停止工作。", d["username"], usd(d["balance"]), usd(d["threshold"])))
	case setting.EventDailySummary:
		subject = pick(fmt.Sprintf("Tollgate daily summary %v", d["day"]), fmt.Sprintf("Tollgate 每日汇总 %v", d["day"]))
		text = pick(fmt.Sprintf("%v: %v requests (%v failed) from %v users, revenue %v.", d["day"], d["requests"], d["errors"], d["users"], usd(d["revenue"])),
			fmt.Sprintf("%v：%v 个用户共 %v 个请求（失败 %v 个），收入 %v。", d["day"], d["users"], d["requests"], d["errors"], usd(d["revenue"])))
	default:
		subject = pick("Tollgate test alert", "Tollgate 测试提醒")
		text = pick("This is a test alert: the channel works.", "这是一条测试提醒：该通道工作正常。")
	}
	htmlBody = "<!doctype html><html><body><h3>" + html.EscapeString(subject) + "</h3><p>" + html.EscapeString(text) + "</p></body></html>"
	return subject, text, htmlBody
}
