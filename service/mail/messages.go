package mail

import (
	"fmt"
	"html"
	"strings"
)

// Kinds of sign-in e-mail.
const (
	KindVerify = "verify" // the sign-up code
	KindChange = "change" // the code for a new address
	KindReset  = "reset"  // the password reset link
	KindTest   = "test"   // the admin's SMTP test
)

// Content is what a sign-in e-mail says: Code for verify/change, Link and Username for reset.
type Content struct {
	Site     string
	Username string
	Code     string
	Link     string
	Minutes  int
}

// Chinese reports whether lang asks for Chinese.
func Chinese(lang string) bool { return strings.HasPrefix(strings.ToLower(lang), "zh") }

// Render writes a sign-in e-mail of kind to to, in zh-CN when lang asks for Chinese and in English otherwise.
func Render(kind, lang, to string, c Content) Message {
	zh := Chinese(lang)
	pick := func(en, cn string) string {
		if zh {
			return cn
		}
		return en
	}
	site := c.Site
	if site == "" {
		site = "Tollgate"
	}
	var subject string
	var lines []string // plain-text paragraphs; the HTML is the same paragraphs, escaped
	var code, link string
	switch kind {
	case KindVerify:
		subject = pick(fmt.Sprintf("%s: your verification code is %s", site, c.Code), fmt.Sprintf("%s：你的验证码是 %s", site, c.Code))
		lines = []string{pick("Enter this code to verify your e-mail address and finish signing up:", "输入以下验证码以验证邮箱并完成注册："),
			pick(fmt.Sprintf("The code expires in %d minutes and works once. If you did not sign up, ignore this e-mail.", c.Minutes),
				fmt.Sprintf("验证码 %d 分钟内有效，只能使用一次。如果不是你本人注册，请忽略此邮件。", c.Minutes))}
		code = c.Code
	case KindChange:
		subject = pick(fmt.Sprintf("%s: confirm your new e-mail address (%s)", site, c.Code), fmt.Sprintf("%s：确认你的新邮箱（%s）", site, c.Code))
		lines = []string{pick(fmt.Sprintf("Enter this code on your profile to make this the e-mail address of %s:", c.Username),
			fmt.Sprintf("在个人资料页输入以下验证码，将此地址设为 %s 的邮箱：", c.Username)),
			pick(fmt.Sprintf("The code expires in %d minutes and works once. If you did not ask for this, ignore this e-mail.", c.Minutes),
				fmt.Sprintf("验证码 %d 分钟内有效，只能使用一次。如果不是你本人操作，请忽略此邮件。", c.Minutes))}
		code = c.Code
	case KindReset:
		subject = pick(fmt.Sprintf("%s: reset your password", site), fmt.Sprintf("%s：重置密码", site))
		lines = []string{pick(fmt.Sprintf("Someone asked to reset the password of the account %s. Open this link to choose a new one:", c.Username),
			fmt.Sprintf("有人请求重置账户 %s 的密码。打开以下链接设置新密码：", c.Username)),
			pick(fmt.Sprintf("The link expires in %d minutes and works once; every session of the account ends when the password changes. If you did not ask for this, ignore this e-mail: your password stays as it is.", c.Minutes),
				fmt.Sprintf("链接 %d 分钟内有效，只能使用一次；密码修改后该账户的所有会话都会结束。如果不是你本人操作，请忽略此邮件，你的密码不会改变。", c.Minutes))}
		link = c.Link
	default:
		subject = pick(fmt.Sprintf("%s: SMTP test", site), fmt.Sprintf("%s：SMTP 测试", site))
		lines = []string{pick("This test e-mail shows that the SMTP settings work.", "这封测试邮件说明 SMTP 设置可以正常使用。")}
	}
	var text, h strings.Builder
	h.WriteString("<!doctype html><html><body style=\"font-family:sans-serif\">")
	for i, l := range lines {
		text.WriteString(l + "\n\n")
		fmt.Fprintf(&h, "<p>%s</p>", html.EscapeString(l))
		if i == 0 && code != "" {
			text.WriteString("    " + code + "\n\n")
			fmt.Fprintf(&h, "<p style=\"font-size:24px;letter-spacing:4px\"><b>%s</b></p>", html.EscapeString(code))
		}
		if i == 0 && link != "" {
			text.WriteString(link + "\n\n")
			fmt.Fprintf(&h, "<p><a href=\"%s\">%s</a></p>", html.EscapeString(link), html.EscapeString(link))
		}
	}
	text.WriteString("— " + site + "\n")
	fmt.Fprintf(&h, "<p>— %s</p></body></html>", html.EscapeString(site))
	return Message{To: to, Subject: subject, Text: text.String(), HTML: h.String()}
}
