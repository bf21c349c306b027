package alert

import (
	"context"

	"tollgate/service/mail"
	"tollgate/service/setting"
)

// sendMail writes the event in the recipient's language and sends it through the configured server (the one
// SMTP sender, service/mail).
func (s *Service) sendMail(ctx context.Context, cfg setting.SMTP, to, lang string, ev Event) result {
	subject, text, html := render(ev, lang)
	ctx, cancel := context.WithTimeout(ctx, s.opt.MailTimeout)
	defer cancel()
	return result{attempts: 1, subject: subject, err: mail.Send(ctx, cfg, mail.Message{To: to, Subject: subject, Text: text, HTML: html}, s.d.Now())}
}
